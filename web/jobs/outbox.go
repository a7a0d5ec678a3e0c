package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpubook/gpubook/models"
)

// Round is what one outbox round did, for logs and tests.
type Round struct {
	Recovered, Claimed, Sent, Retry, Failed, Unconfirmed, Released int
}

// sendMargin is kept free at the end of a send lease: a message is not
// started when less than this is left, so that no send outlives its lease
// and gets mistaken for a crashed one.
const sendMargin = time.Minute

// markTimeout bounds the database writes after a send; they run even when
// the server is shutting down, because a sent message must be recorded.
const markTimeout = 10 * time.Second

func (r *Runner) deliverJob(ctx context.Context) error {
	round, err := r.DeliverOnce(ctx)
	if round.Claimed > 0 || round.Recovered > 0 {
		r.log.Info("outbox round", "claimed", round.Claimed, "sent", round.Sent, "retry", round.Retry,
			"failed", round.Failed, "unconfirmed", round.Unconfirmed, "recovered", round.Recovered)
	}
	return err
}

// DeliverOnce is one round of the outbox worker: mark stale sends
// unconfirmed, claim due messages, send each and record the outcome. The
// scheduler calls it every OutboxEvery; `gpubook mail test --now` and tests
// call it directly.
func (r *Runner) DeliverOnce(ctx context.Context) (Round, error) {
	var round Round
	if r.cfg.Sender == nil {
		return round, errors.New("jobs: no SMTP sender configured")
	}
	now := r.cfg.Clock.Now()
	n, err := r.cfg.Store.RecoverStaleSends(ctx, now)
	if err != nil {
		return round, err
	}
	if round.Recovered = int(n); n > 0 {
		r.log.Warn("sends whose worker vanished are marked unconfirmed and not resent", "count", n)
	}
	msgs, err := r.cfg.Store.ClaimMail(ctx, r.cfg.Owner, now, r.cfg.Batch, r.cfg.SendLease)
	if err != nil {
		return round, err
	}
	round.Claimed = len(msgs)
	stopAt := now.Add(r.cfg.SendLease - sendMargin)
	var errs []error
	for _, m := range msgs {
		if ctx.Err() != nil || r.cfg.Clock.Now().After(stopAt) {
			// Never started: back to the queue at once, not unconfirmed later.
			round.Released++
			errs = append(errs, r.mark(ctx, m, func(mctx context.Context) error {
				return r.cfg.Store.MarkFailed(mctx, m.ID, r.cfg.Owner, errors.New("not attempted: worker stopping"), r.cfg.Clock.Now())
			}))
			continue
		}
		errs = append(errs, r.record(ctx, m, r.cfg.Sender.Send(ctx, m), &round))
	}
	return round, errors.Join(errs...)
}

// SendNow claims, sends and records one pending message at once and
// returns the send's error (nil when the server accepted it); the outbox
// row then says what happens next, as for any round.
func (r *Runner) SendNow(ctx context.Context, id int64) (sendErr error, err error) {
	if r.cfg.Sender == nil {
		return nil, errors.New("jobs: no SMTP sender configured")
	}
	m, err := r.cfg.Store.ClaimMailByID(ctx, id, r.cfg.Owner, r.cfg.Clock.Now(), r.cfg.SendLease)
	if err != nil {
		return nil, err
	}
	sendErr = r.cfg.Sender.Send(ctx, *m)
	return sendErr, r.record(ctx, *m, sendErr, &Round{})
}

// record writes a send's outcome. Only a definite refusal or a failure
// before the server took anything leads to a retry; an unknown outcome is
// never retried.
func (r *Runner) record(ctx context.Context, m models.OutboxMessage, sendErr error, round *Round) error {
	log := r.log.With("id", m.ID, "kind", m.Kind, "dedup_key", m.DedupKey, "attempt", m.Attempts)
	if sendErr == nil {
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
func (r *Runner) mark(ctx context.Context, m models.OutboxMessage, write func(context.Context) error) error {
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	if err := write(mctx); err != nil {
		return fmt.Errorf("jobs: record mail %d: %w", m.ID, err)
	}
	return nil
}
