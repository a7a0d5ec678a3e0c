package models

import (
	"slices"
	"time"
)

// Statuses of a priority request. Only a pending request can be decided;
// a pending request holds nothing and expires when its start passes.
const (
	RequestPending  = "pending"
	RequestApproved = "approved"
	RequestDenied   = "denied"
	RequestExpired  = "expired"
	// RequestWithdrawn: its requester took it back before anyone decided.
	RequestWithdrawn = "withdrawn"
)

// Audit actions of policies, priority requests and lending.
const (
	AuditPolicyLimits    = "policy.limits"
	AuditPolicySettings  = "policy.settings"
	AuditPolicyModels    = "policy.models"
	AuditRequestCreate   = "request.create"
	AuditRequestApprove  = "request.approve"
	AuditRequestDeny     = "request.deny"
	AuditRequestExpire   = "request.expire"
	AuditRequestWithdraw = "request.withdraw"
	AuditBookingPreempt  = "booking.preempt"
	AuditLoanCreate      = "loan.create"
	AuditWatchCreate     = "watch.create"
	AuditRemindersSet    = "user.reminders"
)

// MaxJustification bounds each justification field, in characters.
const MaxJustification = 2000

// JustificationText is the rule for each part of a justification: several
// lines of prose.
var JustificationText = TextRule{Max: MaxJustification, Multiline: true}

// PriorityRequest asks for GPUs outside policy, or for GPUs that others
// hold: the team's leads (or an admin) decide, with a record of why.
type PriorityRequest struct {
	ID        int64
	UserID    int64
	TeamID    *int64 // the requester's team whose leads decide; nil: admins only
	NodeID    int64
	GPUIDs    []int64
	StartsAt  time.Time
	EndsAt    time.Time
	Note      string
	Purpose   string // what it is for
	Urgency   string // why it cannot wait
	Plan      string // what runs, how long
	GiveBack  string // when the GPUs are given back
	Preempt   bool   // may move, split or cancel the standard bookings in the way
	Status    string
	DecidedBy *int64
	DecidedAt *time.Time
	Comment   string
	BookingID *int64
	CreatedAt time.Time
	UpdatedAt time.Time
	// Filled by queries, for display.
	UserName, UserEmail, NodeName, TeamName, DeciderName string
}

// Booking is the request as the booking it asks for.
func (r *PriorityRequest) Booking() NewBooking {
	return NewBooking{UserID: r.UserID, GPUIDs: r.GPUIDs, StartsAt: r.StartsAt, EndsAt: r.EndsAt, Note: r.Note}
}

// ValidateJustification checks the four parts of a request's justification.
func ValidateJustification(r *PriorityRequest) error {
	fe := FieldErrors{}
	for _, f := range []struct {
		name string
		v    *string
	}{{"purpose", &r.Purpose}, {"urgency", &r.Urgency}, {"plan", &r.Plan}, {"give_back", &r.GiveBack}} {
		if fe.Check(f.name, f.v, JustificationText) && *f.v == "" {
			fe.Add(f.name, M("request.err.required"))
		}
	}
	return fe.Err()
}

// CanDecide says whether actor may approve or deny r: an admin, or a lead of
// the request's team, and never the requester (another lead or an admin must).
func CanDecide(actor *User, r *PriorityRequest, leadOf []int64) error {
	switch {
	case actor == nil:
		return NewError(EUNAUTHORIZED, M("err.unauthorized"))
	case actor.ID == r.UserID:
		return NewError(EFORBIDDEN, M("request.err.own"))
	case actor.IsAdmin, r.TeamID != nil && slices.Contains(leadOf, *r.TeamID):
		return nil
	}
	return NewError(EFORBIDDEN, M("request.err.not_lead"))
}

// CheckPending refuses a decision on a request that is no longer pending
// or whose start has passed (it expires instead).
func CheckPending(r *PriorityRequest, now time.Time) error {
	switch {
	case r.Status != RequestPending:
		return NewError(ECONFLICT, M("request.err.decided", "Status", r.Status))
	case !r.StartsAt.After(now):
		return NewError(ECONFLICT, M("request.err.expired"))
	}
	return nil
}

// CanWithdraw says whether actor may take r back: only its requester, and
// only while nobody has decided it.
func CanWithdraw(actor *User, r *PriorityRequest) error {
	switch {
	case actor == nil:
		return NewError(EUNAUTHORIZED, M("err.unauthorized"))
	case actor.ID != r.UserID:
		return NewError(EFORBIDDEN, M("request.err.not_yours"))
	case r.Status != RequestPending:
		return NewError(ECONFLICT, M("request.err.decided", "Status", r.Status))
	}
	return nil
}

// RequestFilter selects priority requests.
type RequestFilter struct {
	Status   string
	UserID   int64
	Decider  *User // requests this user may decide (their teams', or all for an admin), not their own
	From, To time.Time
	Limit    int
}

// Kinds of the emails about priority requests and pre-emptions.
const (
	NoticeNewRequest = "priority_new"
	NoticeDecision   = "priority_decided"
	NoticePreempted  = "preempted"
)

// Notice is what an email about a request tells its recipient: the request,
// and for a pre-emption the booking and what happened to it.
type Notice struct {
	Kind    string
	Request PriorityRequest
	Booking *Booking
	// Preemption is what happened to Booking, for NoticePreempted.
	Preemption *Preemption
	Watch      *Watch // for NoticeFreed
	// DedupKey, when set, replaces the key derived from the request.
	DedupKey string
}

// Mailer renders a notice for one recipient in their language as an
// outbox message. The store calls it inside the transaction of the change,
// so that the change and its emails commit together; nil sends nothing.
type Mailer func(n Notice, to *User) (OutboxMessage, error)
