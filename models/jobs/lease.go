package jobs

import (
	"context"
	"errors"
	"fmt"
)

// errLeaseLost cancels a job whose lease another process took over.
var errLeaseLost = errors.New("jobs: lease lost")

// withLease runs fn while holding the job's lease, renewing it as fn runs
// so that a long run keeps it, and cancelling fn if a renewal fails.
func (r *Runner) withLease(ctx context.Context, name string, fn func(context.Context) error) error {
	ok, err := r.cfg.Store.TryLease(ctx, name, r.cfg.Owner, r.cfg.Clock.Now(), r.cfg.JobLease)
	if err != nil || !ok {
		return err
	}
	defer func() {
		if err := r.cfg.Store.ReleaseLease(context.WithoutCancel(ctx), name, r.cfg.Owner); err != nil {
			r.log.Error("release lease", "job", name, "err", err)
		}
	}()
	return r.heartbeat(ctx, name, fn)
}

// runPeriod runs fn for period if this process claims it, then records it done.
func (r *Runner) runPeriod(ctx context.Context, name, period string, fn func(context.Context, string) error) error {
	if period == "" {
		return nil
	}
	ok, err := r.cfg.Store.ClaimPeriod(ctx, name, period, r.cfg.Owner, r.cfg.Clock.Now(), r.cfg.JobLease)
	if err != nil || !ok {
		return err
	}
	r.log.Info("periodic job starts", "job", name, "period", period)
	err = r.heartbeat(ctx, name, func(ctx context.Context) error { return fn(ctx, period) })
	if err != nil {
		// Left unfinished: after the lease runs out, the next check (here or
		// in another process) takes the period over and runs it again.
		return fmt.Errorf("jobs: %s %s: %w", name, period, err)
	}
	if err := r.cfg.Store.FinishPeriod(context.WithoutCancel(ctx), name, period, r.cfg.Owner); err != nil {
		return err
	}
	r.log.Info("periodic job done", "job", name, "period", period)
	return nil
}

// heartbeat renews the lease every third of its length while fn runs.
func (r *Runner) heartbeat(ctx context.Context, name string, fn func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := r.cfg.Clock.NewTicker(r.cfg.JobLease / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.Chan():
				ok, err := r.cfg.Store.TryLease(ctx, name, r.cfg.Owner, r.cfg.Clock.Now(), r.cfg.JobLease)
				if err == nil && !ok {
					err = errLeaseLost
				}
				if err != nil {
					r.log.Error("renew lease", "job", name, "err", err)
					cancel(err)
					return
				}
			}
		}
	}()
	return fn(ctx)
}
