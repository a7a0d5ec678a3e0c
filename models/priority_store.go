package models

import (
	"context"
	"time"
)

// PolicyStore reads and writes the booking policy. Every write is audited
// in the same transaction.
type PolicyStore interface {
	PolicyLimits(ctx context.Context) ([]PolicyLimit, error)
	PolicySettings(ctx context.Context) (PolicySettings, error)
	ModelTeams(ctx context.Context) (map[string][]int64, error)
	SaveScopeLimits(ctx context.Context, scope string, scopeID int64, limits []PolicyLimit, now time.Time, by Actor) error
	SavePolicySettings(ctx context.Context, s PolicySettings, now time.Time, by Actor) error
	SetModelTeams(ctx context.Context, model string, teamIDs []int64, by Actor) error
	// PolicyInputFor loads what the evaluator needs for userID around [from, to).
	PolicyInputFor(ctx context.Context, userID int64, from, to time.Time, lim BookingLimits) (PolicyInput, error)
	// CheckBooking validates req and evaluates the policy without writing:
	// nil when CreateBooking would confirm it (conflicts aside).
	CheckBooking(ctx context.Context, req NewBooking, lim BookingLimits, now time.Time) ([]PolicyBreach, error)
}

// PriorityStore reads and decides priority requests. Approve re-checks the
// slot and pre-empts in the same transaction as the decision, which is a
// compare-and-set on the pending status so that two deciders never both win.
type PriorityStore interface {
	CreateRequest(ctx context.Context, r *PriorityRequest, lim BookingLimits, now time.Time, by Actor, mail Mailer) error
	Request(ctx context.Context, id int64) (*PriorityRequest, error)
	Requests(ctx context.Context, f RequestFilter) ([]PriorityRequest, error)
	CountPendingFor(ctx context.Context, decider *User, now time.Time) (int, error)
	ApproveRequest(ctx context.Context, id int64, actor *User, comment, plan string, now time.Time, mail Mailer) (*PriorityRequest, error)
	// PreemptionPlan is what approving id would do to the bookings in its way.
	PreemptionPlan(ctx context.Context, id int64, now time.Time) ([]Preemption, error)
	WithdrawRequest(ctx context.Context, id int64, actor *User, now time.Time) (*PriorityRequest, error)
	DenyRequest(ctx context.Context, id int64, actor *User, comment string, now time.Time, mail Mailer) (*PriorityRequest, error)
	ExpireRequests(ctx context.Context, now time.Time) (int, error)
	LeadTeams(ctx context.Context, userID int64) ([]int64, error)
}

// LendingStore keeps the ledger of lent GPU-hours.
type LendingStore interface {
	CreateLoan(ctx context.Context, l *QuotaLoan, lim BookingLimits, now time.Time, by Actor) error
	Loans(ctx context.Context, userID int64, teamIDs []int64, weekStart time.Time) ([]QuotaLoan, error)
}
