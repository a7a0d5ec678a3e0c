package models

import "time"

// Audit actions. Every change that somebody may later argue about is one of these.
const (
	AuditSignIn             = "auth.sign_in"
	AuditSignOut            = "auth.sign_out"
	AuditSignInFailed       = "auth.sign_in_failed"
	AuditUserCreate         = "user.create"
	AuditUserUpdate         = "user.update"
	AuditUserAdmin          = "user.admin"
	AuditUserSSOLink        = "user.sso_link"
	AuditUserUnix           = "user.unix"
	AuditUserDisable        = "user.disable"
	AuditUserEnable         = "user.enable"
	AuditUserRename         = "user.rename"
	AuditTeamCreate         = "team.create"
	AuditTeamShareWeight    = "team.share_weight"
	AuditTeamWholeBookings  = "team.whole_bookings"
	AuditMemberSet          = "team.member_set"
	AuditMemberRemove       = "team.member_remove"
	AuditGroupMapping       = "team.group_map"
	AuditGroupMappingRemove = "team.group_unmap"
	AuditNodeCreate         = "node.create"
	AuditNodeRename         = "node.rename"
	AuditGPUService         = "gpu.service"
	AuditTokenCreate        = "token.create"
	AuditTokenRevoke        = "token.revoke"
	AuditBookingCreate      = "booking.create"
	AuditBookingCancel      = "booking.cancel"
	AuditBookingRelease     = "booking.release"
	AuditBookingExtend      = "booking.extend"
	AuditBookingEditNote    = "booking.edit_note"
	AuditMailRequeue        = "mail.requeue"
	AuditReportRecompute    = "report.recompute"
	AuditBookingImport      = "booking.import"
)

// AuditEvent is one line of the audit log. ActorID is nil for the system or
// the command line; ActorLabel then says who (e.g. "cli").
type AuditEvent struct {
	ID         int64
	At         time.Time
	ActorID    *int64
	ActorLabel string
	Action     string
	TargetType string
	TargetID   string
	Details    string
	IP         string
}

// AuditFilter selects audit events, newest first.
type AuditFilter struct {
	Action  string // exact action, or a prefix ending in "." ("booking.")
	ActorID int64
	// About selects events by or about a user: its actor, its target, or
	// the owner named in its details (a booking's user_id).
	About      int64
	TargetType string
	TargetID   string
	Since      time.Time
	Until      time.Time
	Limit      int
	Offset     int
}

// AuditNames are the display names of the users, teams, nodes and GPUs
// audit sentences name, by kind (RefUser, …) and id.
type AuditNames map[string]map[int64]string

// Name returns the name of a ref, or its fallback label when the thing is gone.
func (n AuditNames) Name(r AuditRef) string {
	if s, ok := n[r.Kind][r.ID]; ok {
		return s
	}
	return r.Text
}

// Actor identifies who does something, for the audit log.
type Actor struct {
	UserID int64  // 0 for the system or the command line
	Label  string // a name for people reading the log
	IP     string
}

// ActorFor returns the audit actor for a signed-in user.
func ActorFor(u *User, ip string) Actor {
	if u == nil {
		return Actor{Label: "anonymous", IP: ip}
	}
	return Actor{UserID: u.ID, Label: u.Email, IP: ip}
}

// CLIActor is the actor of commands run on the server's command line.
var CLIActor = Actor{Label: "cli"}
