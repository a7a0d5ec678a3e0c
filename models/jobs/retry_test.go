package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
)

func TestOutcomeOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want jobs.Outcome
	}{
		{"nil", nil, jobs.Succeeded},
		{"lock busy, wrapped", fmt.Errorf("store: rollup lock: %w", models.ErrLockBusy), jobs.LockBusy},
		{"other", errors.New("boom"), jobs.Failed},
		{"timeout", context.DeadlineExceeded, jobs.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jobs.OutcomeOf(tc.err); got != tc.want {
				t.Errorf("OutcomeOf(%v) = %v; want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestNextTry: the default figures of docs/scaling.md.
func TestNextTry(t *testing.T) {
	retry := jobs.RetryAfterLockBusy
	for _, tc := range []struct {
		name  string
		o     jobs.Outcome
		every time.Duration
		want  time.Duration
	}{
		{"rollup ok", jobs.Succeeded, 5 * time.Minute, 4*time.Minute + 30*time.Second},
		{"rollup failed", jobs.Failed, 5 * time.Minute, 4*time.Minute + 30*time.Second},
		{"rollup lock busy", jobs.LockBusy, 5 * time.Minute, 30 * time.Second},
		{"partitions lock busy", jobs.LockBusy, time.Hour, 30 * time.Second},
		{"retention lock busy", jobs.LockBusy, 6 * time.Hour, 30 * time.Second},
		{"retention ok", jobs.Succeeded, 6 * time.Hour, 5*time.Hour + 24*time.Minute},
		{"minute job lock busy: its interval is sooner", jobs.LockBusy, 20 * time.Second, 18 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jobs.NextTry(tc.o, tc.every, retry); got != tc.want {
				t.Errorf("NextTry(%v, %v) = %v; want %v", tc.o, tc.every, got, tc.want)
			}
		})
	}
}

// TestCheckEvery: whatever a job's interval, a replica checks it at least
// every minute, so that a lease that ran out is taken within a minute.
func TestCheckEvery(t *testing.T) {
	for _, tc := range []struct {
		every, want time.Duration
	}{
		{10 * time.Second, 10 * time.Second},
		{time.Minute, time.Minute},
		{5 * time.Minute, time.Minute},
		{time.Hour, time.Minute},
		{6 * time.Hour, time.Minute},
	} {
		t.Run(tc.every.String(), func(t *testing.T) {
			if got := jobs.CheckEvery(tc.every, time.Minute); got != tc.want {
				t.Errorf("CheckEvery(%v) = %v; want %v", tc.every, got, tc.want)
			}
		})
	}
}

// scaled shrinks the runner's minute-sized figures for a test.
func scaled(c *jobs.Config) {
	c.PeriodCheck, c.LockRetry, c.JobLease = 100*time.Millisecond, 200*time.Millisecond, 300*time.Millisecond
}

// TestLockBusyRetriesSoon: a job of a long interval that fails on a held
// lock runs again after LockRetry, on one of the two replicas, not an
// interval later; after its success it does not run again.
func TestLockBusyRetriesSoon(t *testing.T) {
	dbs := replicas(t)
	var runs atomic.Int32
	var runners []*jobs.Runner
	for _, db := range dbs {
		r := newRunner(t, db, clockwork.NewRealClock(), scaled)
		if err := r.Register("usage-retention", 6*time.Hour, func(context.Context) error {
			if runs.Add(1) == 1 {
				return fmt.Errorf("store: prune usage: %w", models.ErrLockBusy)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		runners = append(runners, r)
	}
	var settled time.Time
	runFor(t, func() bool {
		if runs.Load() >= 2 && settled.IsZero() {
			settled = time.Now()
		}
		return !settled.IsZero() && time.Since(settled) > time.Second // ten more checks
	}, runners...)
	if got := runs.Load(); got != 2 {
		t.Errorf("%d runs; want 2: the failed one retried soon, the success held for the interval", got)
	}
}

// TestDeadReplicasLeaseTakenOver: a lease whose holder is gone is taken by
// the other replica at its first check after the lease runs out, though
// the job's interval is an hour.
func TestDeadReplicasLeaseTakenOver(t *testing.T) {
	dbs := replicas(t)
	if ok, err := dbs[0].TryLease(ctx, "usage-partitions", "dead-replica", 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("dead replica's lease: %v %v", ok, err)
	}
	b := newRunner(t, dbs[1], clockwork.NewRealClock(), scaled)
	var ran atomic.Bool
	if err := b.Register("usage-partitions", time.Hour, func(context.Context) error { ran.Store(true); return nil }); err != nil {
		t.Fatal(err)
	}
	runFor(t, ran.Load, b)
	if !ran.Load() {
		t.Error("the live replica never took over the job whose holder is gone")
	}
}

// TestHeldRollupLockRetriedSoon: end to end on two replicas' handles. B
// holds the rollup's lock (as a long ingest does); A's usage-rollup fails
// "lock busy" instead of waiting on it, and runs again, successfully,
// soon after B lets go, not an interval later. The busy run is logged as
// a warning, not an error: it heals itself.
func TestHeldRollupLockRetriedSoon(t *testing.T) {
	dbs := replicas(t)
	tx, err := dbs[1].SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock_shared(7300018)"); err != nil {
		t.Fatal(err)
	}
	var busy, ok atomic.Int32
	var logged lockedBuffer
	a := newRunner(t, dbs[0], clockwork.NewRealClock(), func(c *jobs.Config) {
		scaled(c)
		c.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	})
	if err := a.Register("usage-rollup", time.Hour, func(ctx context.Context) error {
		now := time.Now()
		_, err := dbs[0].RollUsage(ctx, now, now.Add(-35*24*time.Hour), 50)
		switch {
		case errors.Is(err, models.ErrLockBusy):
			if busy.Add(1) == 1 {
				tx.Rollback() // B lets go after A's first failure
			}
		case err == nil:
			ok.Add(1)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	runFor(t, func() bool { return ok.Load() > 0 }, a)
	if busy.Load() != 1 || ok.Load() != 1 {
		t.Errorf("%d lock-busy runs, %d ok; want 1 and 1", busy.Load(), ok.Load())
	}
	if log := logged.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, "lock busy") || strings.Contains(log, "level=ERROR") {
		t.Errorf("the lock-busy run's log, want one warning and no error:\n%s", log)
	}
}

// lockedBuffer is a log's buffer the runner's goroutines write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
