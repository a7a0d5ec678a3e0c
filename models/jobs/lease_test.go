package jobs_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// countingStore is the real store, counting the runner's lease attempts so
// that a test knows a replica has tried.
type countingStore struct {
	*store.DB
	tries atomic.Int32
}

func (s *countingStore) TryLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	s.tries.Add(1)
	return s.DB.TryLease(ctx, name, owner, ttl)
}

// replicas opens two handles on one fresh, migrated PostgreSQL database,
// as two gpubook processes would have.
func replicas(t *testing.T) [2]*store.DB {
	t.Helper()
	url := storetest.MigratedURL(t, store.Postgres)
	dbs := [2]*store.DB{storetest.OpenURL(t, url), storetest.OpenURL(t, url)}
	return dbs
}

// start runs r until the test stops it with the returned function.
func start(t *testing.T, r *jobs.Runner) (stop func()) {
	t.Helper()
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := r.Run(rctx); err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// waitFor polls cond for up to 10 s and reports whether it came true.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestSkewedReplicaCannotTakeAHeldLease: one replica holds a job's lease;
// another whose clock runs 10 minutes ahead tries it and does not get it,
// because the lease is judged on the database's clock.
func TestSkewedReplicaCannotTakeAHeldLease(t *testing.T) {
	dbs := replicas(t)
	release := make(chan struct{})
	var holding atomic.Bool
	a := newRunner(t, dbs[0], clockwork.NewRealClock(), nil)
	if err := a.Register("sweep", time.Hour, func(context.Context) error {
		holding.Store(true)
		<-release
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stopA := start(t, a)
	if !waitFor(holding.Load) {
		t.Fatal("the first replica never ran the job")
	}
	skewed := &countingStore{DB: dbs[1]}
	var ranB atomic.Bool
	b, err := jobs.New(jobs.Config{Store: skewed, Clock: clockwork.NewFakeClockAt(time.Now().Add(10 * time.Minute)), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Register("sweep", time.Hour, func(context.Context) error { ranB.Store(true); return nil }); err != nil {
		t.Fatal(err)
	}
	stopB := start(t, b)
	tried := waitFor(func() bool { return skewed.tries.Load() > 0 })
	close(release)
	stopB()
	stopA()
	if !tried {
		t.Fatal("the skewed replica never tried the lease")
	}
	if ranB.Load() {
		t.Error("a replica whose clock is 10 minutes ahead took a lease another replica held")
	}
}

// TestBlockedJobLosesItsLease: a run that blocks and ignores its context
// is cancelled after the job timeout and its lease released, so that the
// other replica takes the job over instead of waiting forever.
func TestBlockedJobLosesItsLease(t *testing.T) {
	dbs := replicas(t)
	release, firstDone := make(chan struct{}), make(chan struct{})
	var blocked, cancelled, ranB atomic.Bool
	var runs atomic.Int32
	mod := func(c *jobs.Config) { c.JobTimeout, c.JobLease = 300*time.Millisecond, 3*time.Second }
	a := newRunner(t, dbs[0], clockwork.NewRealClock(), mod)
	if err := a.Register("sweep", 50*time.Millisecond, func(ctx context.Context) error {
		// Only the first run is judged: after its timeout this replica may
		// start the job again before the other one takes it, and that run,
		// blocked too, can still be inside its own timeout at the release.
		first := runs.Add(1) == 1
		blocked.Store(true)
		<-release // stuck where it does not look at ctx
		if first {
			cancelled.Store(ctx.Err() != nil)
			close(firstDone)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stopA := start(t, a)
	if !waitFor(blocked.Load) {
		t.Fatal("the first replica never ran the job")
	}
	b := newRunner(t, dbs[1], clockwork.NewRealClock(), mod)
	if err := b.Register("sweep", 50*time.Millisecond, func(context.Context) error { ranB.Store(true); return nil }); err != nil {
		t.Fatal(err)
	}
	stopB := start(t, b)
	took := waitFor(ranB.Load)
	close(release)
	select {
	case <-firstDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the first blocked run did not return after its release")
	}
	stopB()
	stopA()
	if !took {
		t.Error("the blocked run kept its lease; the other replica never ran the job")
	}
	if !cancelled.Load() {
		t.Error("the blocked run's context was not cancelled at its timeout")
	}
}
