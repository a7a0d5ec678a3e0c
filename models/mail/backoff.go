package mail

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gpubook/gpubook/models"
)

// serverState is what this process knows of the SMTP server's health:
// after a failure it is left alone until until, and each further failure
// doubles the wait. A hung server then costs one timeout per back-off, not
// one per message.
type serverState struct {
	mu    sync.Mutex
	until time.Time
	wait  time.Duration
	err   error // the failure that started the current back-off
}

// check is an error while the server is backed off.
func (s *serverState) check(now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Before(s.until) {
		return fmt.Errorf("mail: SMTP server backed off until %s: %w", s.until.UTC().Format(time.RFC3339), s.err)
	}
	return nil
}

// fail records a failure and returns how long the server is left alone.
func (s *serverState) fail(now time.Time, first, most time.Duration, err error) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait = min(max(first, 2*s.wait), most)
	s.until = now.Add(s.wait)
	s.err = fmt.Errorf("mail: SMTP server failed, backing off %s: %w", s.wait, err)
	return s.wait
}

// ok records a send the server accepted: the back-off starts over.
func (s *serverState) ok() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.until, s.wait, s.err = time.Time{}, 0, nil
}

// release puts a claimed message that was never attempted back to the
// queue; a row no longer ours was recovered already.
func (r *Outbox) release(ctx context.Context, m models.OutboxMessage, round *Round, reason any) error {
	round.Released++
	r.log.Info("mail not attempted; released", "id", m.ID, "reason", reason)
	err := r.mark(ctx, m, func(mctx context.Context) error { return r.cfg.Store.ReleaseMail(mctx, m.ID, r.cfg.Owner) })
	if models.ErrorCode(err) == models.ENOTFOUND {
		return nil
	}
	return err
}

// resendUnconfirmed queues unconfirmed mail again when the admin opted in
// (ResendUnconfirmedAfter) and the server has since sent other mail.
func (r *Outbox) resendUnconfirmed(ctx context.Context, round *Round) error {
	if r.cfg.ResendUnconfirmedAfter <= 0 {
		return nil
	}
	n, err := r.cfg.Store.ResendUnconfirmed(ctx, r.cfg.ResendUnconfirmedAfter, r.cfg.Policy.MaxAttempts)
	if err != nil {
		return err
	}
	if round.Resent = int(n); n > 0 {
		r.log.Warn("unconfirmed mail queued again; its recipients may get it twice", "count", n,
			"after", r.cfg.ResendUnconfirmedAfter)
	}
	return nil
}

// lastErr is the failure that started the current back-off.
func (s *serverState) lastErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
