package mail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
)

// Store is what the outbox delivery needs from the database.
type Store interface {
	models.OutboxStore
}

// Sender delivers one outbox message; Mailer implements it over SMTP. A
// failure should be a *models.DeliveryError saying whether to retry.
type Sender interface {
	Send(ctx context.Context, m models.OutboxMessage) error
}

// OutboxConfig holds the outbox worker's dependencies and tuning; zero
// values take the defaults.
type OutboxConfig struct {
	Store     Store
	Sender    Sender
	Clock     clockwork.Clock
	Logger    *slog.Logger
	Owner     string              // who holds claims: the job runner's owner
	Policy    models.OutboxPolicy // retries; DefaultOutboxPolicy when zero
	Batch     int                 // messages claimed per round (50)
	SendLease time.Duration       // how long a claimed batch is ours (10 min)
	// SendMargin is kept free at the end of the send lease (1 min): a
	// message is not started when less than this is left on the database's
	// clock, so that no send outlives its lease and is taken for a crashed one.
	SendMargin time.Duration
	KeepSent   time.Duration  // sent mail older than this is deleted (30 days)
	Jitter     func() float64 // in [0, 1), spreads retries; math/rand when nil
	// RoundTimeout bounds a round: no message is started after it (2 min,
	// at most the send lease less its margin), so a slow or hung server
	// holds a batch for minutes, not one timeout per message.
	RoundTimeout time.Duration
	// Backoff is how long the server is left alone after it failed (no
	// answer, no greeting, no reply in time): 30 s, doubling up to
	// BackoffMax (10 min) while it keeps failing.
	Backoff, BackoffMax time.Duration
	// ResendUnconfirmedAfter, when above zero, queues an unconfirmed
	// message again this long after its attempt, once the server has since
	// sent another: the admin's opt-in to possible duplicates. Zero: never.
	ResendUnconfirmedAfter time.Duration
}

// Outbox sends what the outbox table holds: every message once, retried
// after a refusal that may pass, never resent when the outcome is unknown.
// The job runner calls Deliver every few seconds in every process (claims
// are disjoint) and Cleanup hourly under a lease.
type Outbox struct {
	cfg  OutboxConfig
	log  *slog.Logger
	down serverState
}

// NewOutbox checks cfg and fills in the defaults.
func NewOutbox(cfg OutboxConfig) (*Outbox, error) {
	if cfg.Store == nil {
		return nil, errors.New("mail: outbox: no store")
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Owner == "" {
		return nil, errors.New("mail: outbox: no owner")
	}
	if cfg.Policy.MaxAttempts == 0 {
		cfg.Policy = models.DefaultOutboxPolicy
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 50
	}
	if cfg.SendLease <= 0 {
		cfg.SendLease = 10 * time.Minute
	}
	if cfg.SendMargin <= 0 {
		cfg.SendMargin = min(time.Minute, cfg.SendLease/2)
	}
	if cfg.KeepSent <= 0 {
		cfg.KeepSent = 30 * 24 * time.Hour
	}
	if cfg.Jitter == nil {
		cfg.Jitter = mathrand.Float64
	}
	if cfg.RoundTimeout <= 0 {
		cfg.RoundTimeout = 2 * time.Minute
	}
	cfg.RoundTimeout = min(cfg.RoundTimeout, cfg.SendLease-cfg.SendMargin)
	if cfg.Backoff <= 0 {
		cfg.Backoff = 30 * time.Second
	}
	if cfg.BackoffMax < cfg.Backoff {
		cfg.BackoffMax = max(10*time.Minute, cfg.Backoff)
	}
	return &Outbox{cfg: cfg, log: cfg.Logger.With("owner", cfg.Owner)}, nil
}

// Round is what one outbox round did, for logs and tests.
type Round struct {
	Recovered, Claimed, Sent, Retry, Failed, Unconfirmed, Released int
	Resent                                                         int // unconfirmed messages queued again (ResendUnconfirmedAfter)
	// ServerDown is set when the server failed this round (or is backed
	// off): the rest of the batch was released and the round is an error.
	ServerDown bool
}

// markTimeout bounds the database writes after a send; they run even when
// the server is shutting down, because a sent message must be recorded.
const markTimeout = 10 * time.Second

// Deliver is the worker's job: one round, logged when it did something.
func (r *Outbox) Deliver(ctx context.Context) error {
	round, err := r.DeliverOnce(ctx)
	if round.Claimed > 0 || round.Recovered > 0 || round.Resent > 0 {
		r.log.Info("outbox round", "claimed", round.Claimed, "sent", round.Sent, "retry", round.Retry,
			"failed", round.Failed, "unconfirmed", round.Unconfirmed, "recovered", round.Recovered,
			"released", round.Released, "resent", round.Resent)
	}
	return err
}

// DeliverOnce is one round of the outbox worker: recover stale sends,
// claim due messages, and for each mark the attempt, send it and record
// the outcome. The scheduler calls it every OutboxEvery; `gpubook mail
// test --now` and tests call it directly.
func (r *Outbox) DeliverOnce(ctx context.Context) (Round, error) {
	var round Round
	if r.cfg.Sender == nil {
		return round, errors.New("mail: no SMTP sender configured")
	}
	requeued, unconfirmed, err := r.cfg.Store.RecoverStaleSends(ctx)
	if err != nil {
		return round, err
	}
	if round.Recovered = int(requeued + unconfirmed); round.Recovered > 0 {
		r.log.Warn("sends whose worker vanished: never attempted ones queued again, started ones unconfirmed and not resent",
			"requeued", requeued, "unconfirmed", unconfirmed)
	}
	if err := r.resendUnconfirmed(ctx, &round); err != nil {
		return round, err
	}
	if err := r.down.check(r.cfg.Clock.Now()); err != nil {
		round.ServerDown = true
		return round, err
	}
	msgs, err := r.cfg.Store.ClaimMail(ctx, r.cfg.Owner, r.cfg.Batch, r.cfg.SendLease)
	if err != nil {
		return round, err
	}
	round.Claimed = len(msgs)
	rctx, cancel := context.WithTimeout(ctx, r.cfg.RoundTimeout)
	defer cancel()
	var errs []error
	for _, m := range msgs {
		if round.ServerDown {
			errs = append(errs, r.release(ctx, m, &round, "SMTP server failed this round"))
			continue
		}
		errs = append(errs, r.attempt(rctx, m, &round))
	}
	if round.ServerDown {
		errs = append(errs, r.down.lastErr())
	} else if rctx.Err() != nil && ctx.Err() == nil {
		errs = append(errs, fmt.Errorf("mail: outbox round ran out of its %s; %d messages left for the next", r.cfg.RoundTimeout, round.Released))
	}
	return round, errors.Join(errs...)
}

// attempt sends one claimed message. The attempt is marked in the database
// just before the SMTP transaction, so that if this process dies the
// messages it never reached go back to the queue instead of being
// mistaken for sends with an unknown outcome.
func (r *Outbox) attempt(ctx context.Context, m models.OutboxMessage, round *Round) error {
	var startErr error
	if startErr = ctx.Err(); startErr == nil {
		startErr = r.cfg.Store.StartAttempt(ctx, m.ID, r.cfg.Owner, r.cfg.SendMargin)
	}
	if startErr != nil {
		// Never started (stopping, out of time, or too little lease
		// left): back to the queue at once.
		return r.release(ctx, m, round, startErr)
	}
	m.Attempts++
	return r.record(ctx, m, r.cfg.Sender.Send(ctx, m), round)
}

// SendNow claims, sends and records one pending message at once and
// returns the send's error (nil when the server accepted it); the outbox
// row then says what happens next, as for any round.
func (r *Outbox) SendNow(ctx context.Context, id int64) (sendErr error, err error) {
	if r.cfg.Sender == nil {
		return nil, errors.New("mail: no SMTP sender configured")
	}
	m, err := r.cfg.Store.ClaimMailByID(ctx, id, r.cfg.Owner, r.cfg.SendLease)
	if err != nil {
		return nil, err
	}
	if err := r.cfg.Store.StartAttempt(ctx, m.ID, r.cfg.Owner, 0); err != nil {
		return nil, err
	}
	m.Attempts++
	sendErr = r.cfg.Sender.Send(ctx, *m)
	return sendErr, r.record(ctx, *m, sendErr, &Round{})
}

// record writes a send's outcome. Only a definite refusal or a failure
// before the server took anything leads to a retry; an unknown outcome is
// never retried.
func (r *Outbox) record(ctx context.Context, m models.OutboxMessage, sendErr error, round *Round) error {
	log := r.log.With("id", m.ID, "kind", m.Kind, "dedup_key", m.DedupKey, "attempt", m.Attempts)
	var de *models.DeliveryError
	if errors.As(sendErr, &de) && de.ServerDown {
		round.ServerDown = true
		d := r.down.fail(r.cfg.Clock.Now(), r.cfg.Backoff, r.cfg.BackoffMax, sendErr)
		log.Warn("SMTP server failed; leaving it alone", "for", d)
	}
	if sendErr == nil {
		r.down.ok()
		round.Sent++
		return r.mark(ctx, m, func(mctx context.Context) error {
			return r.cfg.Store.MarkSent(mctx, m.ID, r.cfg.Owner, r.cfg.Clock.Now())
		})
	}
	switch models.DeliveryOutcome(sendErr) {
	case models.DeliveryUnknown:
		round.Unconfirmed++
		log.Warn("mail may or may not have been accepted; not resending", "err", sendErr)
		return r.mark(ctx, m, func(mctx context.Context) error {
			return r.cfg.Store.MarkUnconfirmed(mctx, m.ID, r.cfg.Owner, sendErr)
		})
	case models.DeliveryReject:
		round.Failed++
		log.Error("mail refused for good", "err", sendErr)
		return r.mark(ctx, m, func(mctx context.Context) error {
			return r.cfg.Store.MarkFailed(mctx, m.ID, r.cfg.Owner, sendErr, time.Time{})
		})
	}
	next := r.cfg.Policy.NextAttempt(r.cfg.Clock.Now(), m.Attempts, r.cfg.Jitter())
	if next.IsZero() {
		round.Failed++
		log.Error("mail given up after the last retry", "err", sendErr)
	} else {
		round.Retry++
		log.Warn("mail not sent; will retry", "next_attempt", next, "err", sendErr)
	}
	return r.mark(ctx, m, func(mctx context.Context) error {
		return r.cfg.Store.MarkFailed(mctx, m.ID, r.cfg.Owner, sendErr, next)
	})
}

// mark runs a store write on a context that survives shutdown.
func (r *Outbox) mark(ctx context.Context, m models.OutboxMessage, write func(context.Context) error) error {
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	if err := write(mctx); err != nil {
		return fmt.Errorf("mail: record mail %d: %w", m.ID, err)
	}
	return nil
}

// Cleanup deletes sent mail older than KeepSent: the outbox is a queue, and
// the bodies hold personal data.
func (r *Outbox) Cleanup(ctx context.Context) error {
	n, err := r.cfg.Store.DeleteSentBefore(ctx, r.cfg.Clock.Now().Add(-r.cfg.KeepSent))
	if err != nil {
		return err
	}
	if n > 0 {
		r.log.Info("deleted old sent mail", "count", n)
	}
	return nil
}
