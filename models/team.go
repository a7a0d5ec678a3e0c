package models

import (
	"strconv"
	"strings"
	"time"
)

// Roles a user can have in a team.
const (
	RoleMember = "member"
	RoleLead   = "lead"
)

// Sources of a membership: set by hand in the admin pages, or mirrored from
// the identity provider's groups (refreshed at every sign-in).
const (
	SourceManual = "manual"
	SourceIdP    = "idp"
)

// Team groups users; its leads approve the team's priority requests.
type Team struct {
	ID   int64
	Name string
	// ShareWeight is the team's weight in the fair-share entitled shares
	// (docs/reports.md): admins set it when teams should not be equal.
	ShareWeight float64
	// WholeBookings: the team's multi-GPU bookings are all or nothing (its
	// jobs cannot run on fewer GPUs), so a pre-empting request takes all
	// GPUs of one it needs some of, and the approval preview says why.
	WholeBookings bool
	CreatedAt     time.Time
}

// MaxShareWeight bounds a team's weight, as the database's check does.
const MaxShareWeight = 1000

// ParseShareWeight reads the admin form's weight: a number above 0 and at
// most MaxShareWeight.
func ParseShareWeight(s string) (float64, error) {
	w, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(w > 0 && w <= MaxShareWeight) {
		fe := FieldErrors{}
		fe.Add("share_weight", M("err.share_weight_invalid", "Max", MaxShareWeight))
		return 0, fe.Err()
	}
	return w, nil
}

// Validate checks a team before it is written.
func (t *Team) Validate() error {
	fe := FieldErrors{}
	if fe.Check("name", &t.Name, TeamText) && t.Name == "" {
		fe.Add("name", M("err.name_required"))
	}
	return fe.Err()
}

// Membership says that a user belongs to a team, and how.
type Membership struct {
	TeamID    int64
	UserID    int64
	Role      string
	Source    string
	CreatedAt time.Time
	// Filled by queries that join, for display.
	TeamName  string
	UserName  string
	UserEmail string
}

// Validate checks a membership before it is written.
func (m *Membership) Validate() error {
	fe := FieldErrors{}
	if m.TeamID <= 0 {
		fe.Add("team_id", M("err.team_required"))
	}
	if m.UserID <= 0 {
		fe.Add("user_id", M("err.user_required"))
	}
	if m.Role != RoleMember && m.Role != RoleLead {
		fe.Add("role", M("err.role_invalid"))
	}
	if m.Source == "" {
		m.Source = SourceManual
	}
	if m.Source != SourceManual && m.Source != SourceIdP {
		fe.Add("source", M("err.source_invalid"))
	}
	return fe.Err()
}
