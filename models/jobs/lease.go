package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errLeaseLost cancels a job whose lease another process took over.
var errLeaseLost = errors.New("jobs: lease lost")

// errTimedOut cancels a job that ran past its timeout.
var errTimedOut = errors.New("jobs: run timed out")

// withLease runs fn, when the job is due, while holding the job's lease,
// renewing it as fn runs so that a long run keeps it, and cancelling fn if
// a renewal fails. After the run the lease is kept until the job is due
// again (NextTry: nearly every after a success or a failure, soon after a
// held lock), so that the other replicas, whose checks tick at other
// moments, do not run it early; this process keeps the same due time.
func (r *Runner) withLease(ctx context.Context, name string, every time.Duration, fn func(context.Context) error) error {
	if r.cfg.Clock.Now().Before(r.due.get(name)) {
		return errNotOurTurn
	}
	ok, err := r.cfg.Store.TryLease(ctx, name, r.cfg.Owner, r.cfg.JobLease)
	if err != nil {
		return err
	}
	if !ok {
		return errNotOurTurn
	}
	start := r.cfg.Clock.Now()
	err = r.heartbeat(ctx, name, r.cfg.JobTimeout, fn)
	next := NextTry(OutcomeOf(err), every, r.cfg.LockRetry)
	// Elapsed time is measured here, but the hold ends on the
	// database's clock: only a difference of this clock's readings is used.
	hold := next - r.cfg.Clock.Since(start)
	if ctx.Err() != nil {
		next, hold = 0, 0 // shutting down: another replica takes it at once
	}
	r.due.set(name, start.Add(next))
	if rerr := r.cfg.Store.ReleaseLease(context.WithoutCancel(ctx), name, r.cfg.Owner, hold); rerr != nil {
		r.log.Error("release lease", "job", name, "err", rerr)
	}
	return err
}

// dueTimes is when each leased job is next due in this process.
type dueTimes struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (d *dueTimes) get(name string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.m[name]
}

func (d *dueTimes) set(name string, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[string]time.Time{}
	}
	d.m[name] = at
}

// runPeriod runs fn for the period due now on the database's clock if
// this process claims it, then records it done.
func (r *Runner) runPeriod(ctx context.Context, name string, periodFunc func(time.Time) string, fn func(context.Context, string) error) error {
	now, err := r.cfg.Store.Now(ctx)
	if err != nil {
		return err
	}
	period := periodFunc(now)
	if period == "" {
		return errNotOurTurn
	}
	ok, err := r.cfg.Store.ClaimPeriod(ctx, name, period, r.cfg.Owner, r.cfg.JobLease)
	if err != nil {
		return err
	}
	if !ok {
		return errNotOurTurn
	}
	r.log.Info("periodic job starts", "job", name, "period", period)
	err = r.heartbeat(ctx, name, r.cfg.PeriodTimeout, func(ctx context.Context) error { return fn(ctx, period) })
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

// heartbeat renews the lease every third of its length while fn runs, for
// at most timeout. Then fn's context ends and the renewals stop; the lease
// is released at once, so that a run stuck where it ignores its context
// (a hung connection, say) holds the job for timeout at most, and another
// replica takes it over at its next tick.
func (r *Runner) heartbeat(ctx context.Context, name string, timeout time.Duration, fn func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx, stop := context.WithTimeoutCause(ctx, timeout, errTimedOut)
	defer stop()
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
				if errors.Is(context.Cause(ctx), errTimedOut) {
					r.log.Error("job ran past its timeout; lease released", "job", name, "timeout", timeout)
					if err := r.cfg.Store.ReleaseLease(context.WithoutCancel(ctx), name, r.cfg.Owner, 0); err != nil {
						r.log.Error("release lease", "job", name, "err", err)
					}
				}
				return
			case <-tick.Chan():
				ok, err := r.cfg.Store.TryLease(ctx, name, r.cfg.Owner, r.cfg.JobLease)
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
