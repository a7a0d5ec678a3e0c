package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/mail"
	"strings"
	"time"
)

// Outbox statuses. A message moves pending → sending → sent, or back to
// pending after a failure that nothing was accepted for, or to failed for
// good. A sending row whose worker vanished goes back to pending when its
// SMTP transaction had not started, and becomes unconfirmed when it had:
// the server may have accepted it before the crash, and since a duplicate
// email is worse than a missing one, it is not sent again unless an admin
// re-queues it, knowing that a duplicate is possible.
const (
	OutboxPending     = "pending"
	OutboxSending     = "sending"
	OutboxSent        = "sent"
	OutboxFailed      = "failed"
	OutboxUnconfirmed = "unconfirmed"
)

// OutboxStatuses lists every status in the order an admin view shows them.
var OutboxStatuses = []string{OutboxPending, OutboxSending, OutboxSent, OutboxFailed, OutboxUnconfirmed}

// OutboxMessage is one email as it waits in the outbox. The caller renders
// Subject, TextBody and HTMLBody when it enqueues, so that what is sent is
// fixed at the moment of the event, whatever changes later.
type OutboxMessage struct {
	ID       int64
	Kind     string // e.g. "report", "preempted", "test"
	DedupKey string // e.g. "report:2026-W49:user:17"; a second enqueue is a no-op
	ToUserID *int64 // nil for addresses that are no user (mail test) or deleted users
	ToEmail  string
	Lang     string
	Subject  string
	TextBody string
	HTMLBody string
	// UnsubscribeURL, when set, becomes the List-Unsubscribe header.
	UnsubscribeURL string

	Status        string
	Attempts      int // sends started, counting the one in progress
	NextAttemptAt time.Time
	LeaseOwner    string
	LeaseUntil    *time.Time
	LastError     string
	CreatedAt     time.Time
	SentAt        *time.Time
	// AttemptStartedAt is when the current claim's SMTP transaction began;
	// nil while the message is only claimed.
	AttemptStartedAt *time.Time
}

// Validate checks a message before it is enqueued, so that a row that could
// never be sent is refused at the caller instead of failing in the worker.
func (m *OutboxMessage) Validate() error {
	fe := FieldErrors{}
	m.ToEmail = strings.TrimSpace(m.ToEmail)
	if strings.TrimSpace(m.Kind) == "" {
		fe.Add("kind", M("err.invalid"))
	}
	if strings.TrimSpace(m.DedupKey) == "" {
		fe.Add("dedup_key", M("err.invalid"))
	} else if len(m.DedupKey) > 400 {
		fe.Add("dedup_key", M("err.too_long", "Max", 400))
	}
	if a, err := mail.ParseAddress(m.ToEmail); err != nil || a.Address != m.ToEmail {
		fe.Add("to_email", M("err.email_invalid"))
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		fe.Add("subject", M("err.invalid"))
	}
	if m.Subject == "" || m.TextBody == "" {
		fe.Add("body", M("err.invalid"))
	}
	if m.Lang == "" {
		m.Lang = Languages[0]
	}
	return fe.Err()
}

// MessageID derives the Message-ID header from the dedup key: the same
// logical email always carries the same ID, so that a receiving server or
// client that sees it twice (after an operator re-queues it) can tell.
func MessageID(dedupKey string) string {
	sum := sha256.Sum256([]byte(dedupKey))
	return hex.EncodeToString(sum[:16]) + "@gpubook"
}

// OutboxStats counts the outbox's rows by status for the admin view;
// Unconfirmed in particular needs a person's eye.
type OutboxStats struct {
	Counts map[string]int64
	// OldestPending is when the longest-waiting pending message was made.
	OldestPending *time.Time
}

// OutboxStore is the outbox the features write to and the worker drains.
type OutboxStore interface {
	// EnqueueMail adds m unless its DedupKey is already there (created=false).
	EnqueueMail(ctx context.Context, m OutboxMessage) (created bool, err error)
	// ClaimMail moves at most limit due pending messages to sending, leased
	// to owner for lease on the database's clock; concurrent claimers never
	// get the same row. A claim is not yet an attempt.
	ClaimMail(ctx context.Context, owner string, limit int, lease time.Duration) ([]OutboxMessage, error)
	// ClaimMailByID is ClaimMail for one pending message, due or not.
	ClaimMailByID(ctx context.Context, id int64, owner string, lease time.Duration) (*OutboxMessage, error)
	// StartAttempt marks a claimed message as in its SMTP transaction and
	// counts the attempt; it fails (ENOTFOUND) when the lease is gone or has
	// less than margin left, and the message must then not be sent.
	StartAttempt(ctx context.Context, id int64, owner string, margin time.Duration) error
	// ReleaseMail puts a claimed, never attempted message back to pending.
	ReleaseMail(ctx context.Context, id int64, owner string) error
	MarkSent(ctx context.Context, id int64, owner string, now time.Time) error
	// MarkFailed records a send that was refused or never reached the
	// server: back to pending at nextAttempt, or failed when it is zero.
	MarkFailed(ctx context.Context, id int64, owner string, sendErr error, nextAttempt time.Time) error
	// MarkUnconfirmed records a send whose outcome is unknown.
	MarkUnconfirmed(ctx context.Context, id int64, owner string, sendErr error) error
	// RecoverStaleSends looks at sending rows whose lease expired: those
	// never attempted go back to pending (requeued), those whose attempt had
	// started become unconfirmed.
	RecoverStaleSends(ctx context.Context) (requeued, unconfirmed int64, err error)
	// ResendUnconfirmed queues again the unconfirmed messages (fewer than
	// maxAttempts tries) whose attempt started over after ago, once a later
	// attempt was sent: the server works again. Only on an admin's opt-in.
	ResendUnconfirmed(ctx context.Context, after time.Duration, maxAttempts int) (int64, error)
	DeleteSentBefore(ctx context.Context, before time.Time) (int64, error)
	OutboxStats(ctx context.Context) (OutboxStats, error)
	OutboxMessage(ctx context.Context, id int64) (*OutboxMessage, error)
}

// OutboxAdminStore is what an admin needs to look at unconfirmed mail and
// send it again, knowing the recipient may already have it.
type OutboxAdminStore interface {
	// UnconfirmedMail lists up to limit unconfirmed messages, oldest first.
	UnconfirmedMail(ctx context.Context, limit int) ([]OutboxMessage, error)
	// RequeueUnconfirmed puts the given unconfirmed messages (all of them
	// when ids is empty) back to pending and audit-logs each one.
	RequeueUnconfirmed(ctx context.Context, by Actor, ids []int64) (int64, error)
}

// LeaseStore coordinates background jobs between processes on one database.
type LeaseStore interface {
	// TryLease takes or renews the job's lease; false while another owner holds it.
	// Every lease time is on the database's clock, never the caller's.
	TryLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	// ReleaseLease frees owner's lease after hold (at once when hold <= 0).
	ReleaseLease(ctx context.Context, name, owner string, hold time.Duration) error
	// ClaimPeriod is true for exactly one caller per (job, period), and again
	// only if that caller's run died unfinished (its lease ran out before
	// FinishPeriod), so that a crash mid-run is finished by another process.
	// Periods must sort as strings in time order ("2026-W49", "2026-12-07").
	ClaimPeriod(ctx context.Context, name, period, owner string, ttl time.Duration) (bool, error)
	FinishPeriod(ctx context.Context, name, period, owner string) error
	// Now is the database's clock, which decides which period is due.
	Now(ctx context.Context) (time.Time, error)
}

// OutboxPolicy is how often and how patiently the worker retries.
type OutboxPolicy struct {
	MaxAttempts int           // then the message is failed
	BaseDelay   time.Duration // delay after the first failure
	MaxDelay    time.Duration // the cap of the doubling
}

// DefaultOutboxPolicy tries 12 times over about two days (2 min, 4, 8, …
// capped at 12 h: 41 h in all), so that an SMTP outage over a weekend
// loses no mail.
var DefaultOutboxPolicy = OutboxPolicy{MaxAttempts: 12, BaseDelay: 2 * time.Minute, MaxDelay: 12 * time.Hour}

// NextAttempt is when to try again after the attempts-th failed send, or
// the zero time when the message should be given up. jitter in [0, 1)
// spreads the retries of many messages over ±20 % so that they do not all
// hit a recovering server at once.
func (p OutboxPolicy) NextAttempt(now time.Time, attempts int, jitter float64) time.Time {
	if attempts >= p.MaxAttempts {
		return time.Time{}
	}
	d := p.BaseDelay
	for i := 1; i < attempts && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	d = time.Duration(float64(d) * (0.8 + 0.4*jitter))
	return now.Add(d)
}

// Delivery outcomes of a failed send, as the mailer classifies them.
const (
	DeliveryRetry   = "retry"   // nothing was accepted (connection refused, 4xx): try again
	DeliveryReject  = "reject"  // the server refused it for good (5xx): failed
	DeliveryUnknown = "unknown" // it may have been accepted: never resend
)

// DeliveryError is a failed send with what it means for the message.
type DeliveryError struct {
	Outcome string
	Err     error
	// ServerDown is set when the server gave no answer at all (no
	// connection, no greeting, no reply in time): the fault is the
	// server's, not the message's, and the worker backs off the server.
	ServerDown bool
}

func (e *DeliveryError) Error() string { return "delivery " + e.Outcome + ": " + e.Err.Error() }
func (e *DeliveryError) Unwrap() error { return e.Err }

// DeliveryOutcome is err's outcome; an error the mailer did not classify
// is a retry, because nothing suggests the server accepted anything.
func DeliveryOutcome(err error) string {
	var de *DeliveryError
	if errors.As(err, &de) {
		return de.Outcome
	}
	return DeliveryRetry
}
