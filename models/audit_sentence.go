package models

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kinds of things an audit sentence names. The view links each to its page
// and the handler looks up the names of users, teams, nodes and GPUs.
const (
	RefUser    = "user"
	RefTeam    = "team"
	RefNode    = "node"
	RefGPU     = "gpu"
	RefBooking = "booking"
	RefRequest = "request"
	RefTime    = "time" // a moment, shown in the viewer's zone
	RefText    = "text" // words as recorded (a reason, a name, a group)
	RefSystem  = "sys"  // gpubook itself or its command line: Text is a catalogue key
)

// AuditRef is one thing a sentence names: a user, a booking, a time, …
type AuditRef struct {
	Kind string
	ID   int64
	Text string    // RefText: the words; RefSystem: the catalogue key; otherwise a fallback label
	At   time.Time // RefTime
}

// AuditSentence is how an audit event reads: a catalogue key whose
// placeholders are the refs (Actor, User, Booking, …) and plain numbers.
type AuditSentence struct {
	Key  string
	Refs map[string]AuditRef
	Nums map[string]any // Count (for plurals) and other numbers
}

// auditDetails is the union of the details fields the writers record.
type auditDetails struct {
	UserID    int64     `json:"user_id"`
	Admin     *bool     `json:"admin"`
	InService *bool     `json:"in_service"`
	On        *bool     `json:"on"`
	Role      string    `json:"role"`
	Name      string    `json:"name"`
	Email     string    `json:"email"`
	From      string    `json:"from"`
	Changed   []string  `json:"changed"`
	Group     string    `json:"group"`
	Reason    string    `json:"reason"`
	Unix      string    `json:"unix"`
	Model     string    `json:"model"`
	Week      string    `json:"week"`
	Action    string    `json:"action"`
	GPUs      int64     `json:"gpus"`
	Imported  int64     `json:"imported"`
	Weight    float64   `json:"share_weight"`
	Minutes   int64     `json:"gpu_minutes"`
	ToUser    int64     `json:"to_user"`
	RequestID int64     `json:"request_id"`
	BookingID int64     `json:"booking_id"`
	EndsAt    time.Time `json:"ends_at"`
	Freed     bool      `json:"freed_whole_range"`
	TeamID    *int64    `json:"team_id"`
}

// systemActors turns the actor labels of events without a user into
// catalogue keys; an agent's label carries its node's name.
var systemActors = map[string]string{
	"cli": "audit.actor.cli", "system": "audit.actor.system", "anonymous": "audit.actor.anonymous",
	"agent": "audit.actor.agent", "dev-login": "audit.actor.dev_login", "gpubook-auto-release": "audit.actor.auto_release",
}

// AuditActor is who did it: the user when there is one, else gpubook's
// part that acted (its command line, a node's agent, the expiry job).
func AuditActor(e AuditEvent) AuditRef {
	if e.ActorID != nil {
		return AuditRef{Kind: RefUser, ID: *e.ActorID, Text: strings.TrimPrefix(e.ActorLabel, "sso:")}
	}
	if k, ok := systemActors[e.ActorLabel]; ok {
		return AuditRef{Kind: RefSystem, Text: k}
	}
	if node, ok := strings.CutPrefix(e.ActorLabel, "agent:"); ok {
		return AuditRef{Kind: RefText, Text: "gpubook-agent@" + node}
	}
	return AuditRef{Kind: RefText, Text: e.ActorLabel}
}

// DescribeAudit chooses the sentence that tells an event to a person. An
// event it does not know, or whose details it cannot read, still reads as
// "who did what to which", never as JSON.
func DescribeAudit(e AuditEvent) AuditSentence {
	var d auditDetails
	_ = json.Unmarshal([]byte(e.Details), &d) // a detail that does not parse is shown as missing
	target, _ := strconv.ParseInt(e.TargetID, 10, 64)
	s := AuditSentence{Refs: map[string]AuditRef{"Actor": AuditActor(e)}, Nums: map[string]any{}}
	set := func(key string, kv ...any) AuditSentence {
		s.Key = "audit.s." + key
		for i := 0; i+1 < len(kv); i += 2 {
			s.Refs[kv[i].(string)] = kv[i+1].(AuditRef)
		}
		return s
	}
	user := func(id int64) AuditRef { return AuditRef{Kind: RefUser, ID: id, Text: "#" + strconv.FormatInt(id, 10)} }
	ref := func(kind string, id int64) AuditRef {
		return AuditRef{Kind: kind, ID: id, Text: "#" + strconv.FormatInt(id, 10)}
	}
	text := func(s string) AuditRef { return AuditRef{Kind: RefText, Text: s} }
	if strings.HasPrefix(e.Action, "booking.") && e.Action != AuditBookingImport {
		return describeBooking(e, d, target, s, set, user, ref)
	}
	switch e.Action {
	case AuditSignIn:
		return set("sign_in")
	case AuditSignOut:
		return set("sign_out")
	case AuditSignInFailed:
		if d.Email != "" {
			return set("sign_in_failed_as", "Email", text(d.Email))
		}
		return set("sign_in_failed")
	case AuditUserCreate:
		return set("user_create", "User", user(target))
	case AuditUserUpdate:
		if len(d.Changed) > 0 && !slices.ContainsFunc(d.Changed, func(f string) bool { return f != "language" && f != "time_zone" }) {
			return set("user_prefs", "User", user(target)) // a language or zone click
		}
		return set("user_update", "User", user(target))
	case AuditUserAdmin:
		if d.Admin != nil && !*d.Admin {
			return set("user_admin_off", "User", user(target))
		}
		return set("user_admin_on", "User", user(target))
	case AuditUserSSOLink:
		return set("user_sso_link", "User", user(target))
	case AuditUserUnix:
		return set("user_unix", "User", user(target), "Unix", text(d.Unix))
	case AuditUserDisable:
		return set("user_disable", "User", user(target))
	case AuditUserEnable:
		return set("user_enable", "User", user(target))
	case AuditUserRename:
		return set("user_rename", "User", user(target), "From", text(d.From), "Email", text(d.Email))
	case AuditRemindersSet:
		if d.On != nil && !*d.On {
			return set("reminders_off", "User", user(target))
		}
		return set("reminders_on", "User", user(target))
	case AuditTeamCreate:
		return set("team_create", "Team", ref(RefTeam, target))
	case AuditTeamShareWeight:
		s.Nums["Weight"] = strconv.FormatFloat(d.Weight, 'f', -1, 64)
		return set("team_share_weight", "Team", ref(RefTeam, target))
	case AuditTeamWholeBookings:
		if d.On != nil && *d.On {
			return set("team_whole_on", "Team", ref(RefTeam, target))
		}
		return set("team_whole_off", "Team", ref(RefTeam, target))
	case AuditMemberSet:
		if d.Role == "lead" {
			return set("member_set_lead", "User", user(d.UserID), "Team", ref(RefTeam, target))
		}
		return set("member_set", "User", user(d.UserID), "Team", ref(RefTeam, target))
	case AuditMemberRemove:
		return set("member_remove", "User", user(d.UserID), "Team", ref(RefTeam, target))
	case AuditGroupMapping:
		return set("group_map", "Group", text(d.Group), "Team", ref(RefTeam, target))
	case AuditGroupMappingRemove:
		return set("group_unmap", "Group", text("#"+e.TargetID))
	case AuditNodeCreate:
		s.Nums["Count"] = d.GPUs
		return set("node_create", "Node", AuditRef{Kind: RefNode, ID: target, Text: d.Name})
	case AuditNodeRename:
		return set("node_rename", "Node", AuditRef{Kind: RefNode, ID: target, Text: d.Name}, "Name", text(d.Name))
	case "node.enroll":
		return set("node_enroll", "Node", ref(RefNode, target))
	case "node.enroll_token":
		return set("node_enroll_token", "Node", ref(RefNode, target))
	case "node.inventory":
		return set("node_inventory", "Node", ref(RefNode, target))
	case AuditGPUService:
		if d.InService != nil && *d.InService {
			return set("gpu_in_service", "GPU", ref(RefGPU, target))
		}
		return set("gpu_out_of_service", "GPU", ref(RefGPU, target), "Reason", text(d.Reason))
	case AuditWatchCreate:
		return set("watch_create", "GPU", ref(RefGPU, target))
	case AuditTokenCreate:
		return set("token_create", "Name", text(d.Name), "User", user(d.UserID))
	case AuditTokenRevoke:
		return set("token_revoke", "Token", text("#"+e.TargetID))
	case AuditFeedCreate:
		if d.TeamID != nil {
			return set("feed_create_team", "User", user(d.UserID), "Team", ref(RefTeam, *d.TeamID))
		}
		return set("feed_create", "User", user(d.UserID))
	case AuditFeedRevoke:
		return set("feed_revoke", "Feed", text("#"+e.TargetID))
	case AuditRequestCreate:
		return set("request_create", "Request", ref(RefRequest, target))
	case AuditRequestApprove:
		return set("request_approve", "Request", ref(RefRequest, target), "User", user(d.UserID))
	case AuditRequestDeny:
		return set("request_deny", "Request", ref(RefRequest, target), "User", user(d.UserID))
	case AuditRequestWithdraw:
		return set("request_withdraw", "Request", ref(RefRequest, target))
	case AuditRequestExpire:
		return set("request_expire", "Request", ref(RefRequest, target))
	case AuditLoanCreate:
		s.Nums["Hours"] = FormatMinutesAsHours(d.Minutes)
		return set("loan_create", "User", user(d.ToUser))
	case AuditPolicyLimits:
		switch e.TargetType {
		case "policy_user":
			return set("policy_limits_user", "User", user(target))
		case "policy_team":
			return set("policy_limits_team", "Team", ref(RefTeam, target))
		}
		return set("policy_limits_cluster")
	case AuditPolicySettings:
		return set("policy_settings")
	case AuditPolicyModels:
		return set("policy_models", "Model", text(d.Model))
	case AuditMailRequeue:
		return set("mail_requeue", "Email", text("#"+e.TargetID))
	case AuditReportRecompute:
		return set("report_recompute", "Week", text(e.TargetID))
	case AuditBookingImport:
		s.Nums["Count"] = d.Imported
		return set("booking_import")
	}
	return set("other", "Action", text(e.Action), "Target", text(strings.TrimSpace(e.TargetType+" "+e.TargetID)))
}

// describeBooking tells what happened to a booking, saying whose it was
// when somebody else acted on it.
func describeBooking(e AuditEvent, d auditDetails, target int64, s AuditSentence,
	set func(string, ...any) AuditSentence, user func(int64) AuditRef, ref func(string, int64) AuditRef) AuditSentence {
	b := ref(RefBooking, target)
	if e.Action == AuditBookingCreate {
		return set("booking_create", "Booking", b, "User", user(d.UserID))
	}
	own := e.ActorID != nil && *e.ActorID == d.UserID
	whose := func(key string, kv ...any) AuditSentence {
		kv = append(kv, "Booking", b)
		if own || d.UserID == 0 {
			return set(key, kv...)
		}
		return set(key+"_of", append(kv, "User", user(d.UserID))...)
	}
	switch e.Action {
	case AuditBookingCancel:
		return whose("booking_cancel")
	case AuditBookingRelease:
		if d.Freed {
			return whose("booking_release_whole")
		}
		return whose("booking_release")
	case AuditBookingExtend:
		return whose("booking_extend", "Until", AuditRef{Kind: RefTime, At: d.EndsAt})
	case AuditBookingEditNote:
		return whose("booking_note")
	case AuditBookingPreempt:
		return set("booking_preempt", "Booking", b, "User", user(d.UserID), "Request", ref(RefRequest, d.RequestID))
	case AuditBookingService:
		return set("booking_service", "Booking", b, "User", user(d.UserID), "Reason", AuditRef{Kind: RefText, Text: d.Reason})
	}
	return set("other", "Action", AuditRef{Kind: RefText, Text: e.Action}, "Target", b)
}

// AuditActionGroups are the actions the audit filter offers, by area; a
// prefix ending in "." picks a whole area.
var AuditActionGroups = [][]string{
	{"auth.", AuditSignIn, AuditSignOut, AuditSignInFailed},
	{"booking.", AuditBookingCreate, AuditBookingCancel, AuditBookingRelease, AuditBookingExtend, AuditBookingEditNote,
		AuditBookingPreempt, AuditBookingService, AuditBookingImport},
	{"request.", AuditRequestCreate, AuditRequestApprove, AuditRequestDeny, AuditRequestWithdraw, AuditRequestExpire},
	{"user.", AuditUserCreate, AuditUserUpdate, AuditUserAdmin, AuditUserSSOLink, AuditUserUnix, AuditRemindersSet,
		AuditUserDisable, AuditUserEnable, AuditUserRename},
	{"team.", AuditTeamCreate, AuditTeamShareWeight, AuditTeamWholeBookings, AuditMemberSet, AuditMemberRemove, AuditGroupMapping, AuditGroupMappingRemove},
	{"node.", AuditNodeCreate, AuditNodeRename, "node.enroll", "node.enroll_token", "node.inventory"},
	{"gpu.", AuditGPUService, AuditWatchCreate},
	{"policy.", AuditPolicyLimits, AuditPolicySettings, AuditPolicyModels},
	{"token.", AuditTokenCreate, AuditTokenRevoke},
	{"feed.", AuditFeedCreate, AuditFeedRevoke},
	{"loan.", AuditLoanCreate},
	{"mail.", AuditMailRequeue},
	{"report.", AuditReportRecompute},
}

// ValidAuditAction reports whether the filter knows action (or area).
func ValidAuditAction(action string) bool {
	for _, g := range AuditActionGroups {
		for _, a := range g {
			if a == action {
				return true
			}
		}
	}
	return false
}

// AuditActionKey is the catalogue key of an action's or area's human name.
func AuditActionKey(action string) string {
	return "audit.action." + strings.ReplaceAll(strings.TrimSuffix(action, "."), ".", "_")
}
