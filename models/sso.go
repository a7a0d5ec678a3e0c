package models

import (
	"sort"
	"strings"
)

// GroupMapping maps one identity-provider group to a team and a role, as an
// admin set it up ("ml-vision" → Vision member, "ml-vision-leads" → Vision lead).
type GroupMapping struct {
	ID       int64
	Group    string
	TeamID   int64
	Role     string
	TeamName string // filled by queries, for display
}

// Validate checks a mapping before it is written.
func (g *GroupMapping) Validate() error {
	fe := FieldErrors{}
	g.Group = strings.TrimSpace(g.Group)
	if g.Group == "" {
		fe.Add("group", M("err.group_required"))
	} else if len(g.Group) > 200 {
		fe.Add("group", M("err.too_long", "Max", 200))
	}
	if g.TeamID <= 0 {
		fe.Add("team_id", M("err.team_required"))
	}
	if g.Role != RoleMember && g.Role != RoleLead {
		fe.Add("role", M("err.role_invalid"))
	}
	return fe.Err()
}

// GroupRules are the SSO settings that turn groups into teams and admins.
type GroupRules struct {
	Mappings    []GroupMapping
	TeamPrefix  string // "gpu-team-": group gpu-team-vision → team "vision"
	LeadSuffix  string // "-leads": gpu-team-vision-leads → lead of "vision"
	AdminGroups []string
}

// DesiredTeams says which teams (by name for prefix rules, by id for
// mappings) a user with groups belongs to according to the IdP, and in which
// role; lead wins over member when several groups name one team.
func (r GroupRules) DesiredTeams(groups []string) (byID map[int64]string, byName map[string]string) {
	byID, byName = map[int64]string{}, map[string]string{}
	in := map[string]bool{}
	for _, g := range groups {
		in[g] = true
	}
	for _, m := range r.Mappings {
		if in[m.Group] {
			byID[m.TeamID] = strongerRole(byID[m.TeamID], m.Role)
		}
	}
	if r.TeamPrefix == "" {
		return byID, byName
	}
	for _, g := range groups {
		name, ok := strings.CutPrefix(g, r.TeamPrefix)
		if !ok || name == "" {
			continue
		}
		role := RoleMember
		if r.LeadSuffix != "" {
			if base, lead := strings.CutSuffix(name, r.LeadSuffix); lead && base != "" {
				name, role = base, RoleLead
			}
		}
		byName[name] = strongerRole(byName[name], role)
	}
	return byID, byName
}

// IsAdmin reports whether groups include one of the admin groups.
func (r GroupRules) IsAdmin(groups []string) bool {
	for _, g := range groups {
		for _, a := range r.AdminGroups {
			if g == a {
				return true
			}
		}
	}
	return false
}

func strongerRole(a, b string) string {
	if a == RoleLead || b == RoleLead {
		return RoleLead
	}
	return RoleMember
}

// MembershipSync is what a sign-in changes in a user's teams.
type MembershipSync struct {
	Upsert []Membership // role changes and new IdP memberships
	Remove []int64      // team ids of IdP memberships the groups no longer grant
}

// PlanMembershipSync compares a user's memberships with what the IdP says
// (team id → role). IdP memberships follow the groups; memberships set by
// hand are never changed or removed.
func PlanMembershipSync(userID int64, current []Membership, desired map[int64]string) MembershipSync {
	var s MembershipSync
	have := map[int64]Membership{}
	for _, m := range current {
		have[m.TeamID] = m
	}
	teams := make([]int64, 0, len(desired))
	for id := range desired {
		teams = append(teams, id)
	}
	sort.Slice(teams, func(i, j int) bool { return teams[i] < teams[j] })
	for _, id := range teams {
		m, ok := have[id]
		switch {
		case ok && m.Source == SourceManual:
		case ok && m.Role == desired[id]:
		default:
			s.Upsert = append(s.Upsert, Membership{TeamID: id, UserID: userID, Role: desired[id], Source: SourceIdP})
		}
	}
	for _, m := range current {
		if _, ok := desired[m.TeamID]; !ok && m.Source == SourceIdP {
			s.Remove = append(s.Remove, m.TeamID)
		}
	}
	sort.Slice(s.Remove, func(i, j int) bool { return s.Remove[i] < s.Remove[j] })
	return s
}

// SSOIdentity is what a verified ID token says about a person.
type SSOIdentity struct {
	Subject string
	Email   string
	Name    string
	Groups  []string
}

// Validate refuses an identity gpubook cannot use: without an email address
// there is nowhere to send reports, so no user is made at all.
func (id *SSOIdentity) Validate() error {
	fe := FieldErrors{}
	id.Email = NormalizeEmail(id.Email)
	id.Name = strings.TrimSpace(id.Name)
	if id.Subject == "" {
		fe.Add("sub", M("err.sso_no_subject"))
	}
	if id.Email == "" {
		fe.Add("email", M("err.sso_no_email"))
	}
	if id.Name == "" {
		if at := strings.IndexByte(id.Email, '@'); at > 0 {
			id.Name = id.Email[:at]
		}
	}
	return fe.Err()
}
