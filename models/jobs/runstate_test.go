package jobs_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestRunStates: each job's outcome is recorded per tick — a success and
// its time, a failure (keeping the last success), and a tick lost to
// another replica's lease, which is neither and leaves the last run alone.
func TestRunStates(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	// Another process holds "held" for the whole test.
	if ok, err := db.TryLease(ctx, "held", "someone-else", time.Hour); err != nil || !ok {
		t.Fatalf("take lease: %v %v", ok, err)
	}
	r := newRunner(t, db, clockwork.NewRealClock(), nil)
	var heldRan atomic.Int32
	if err := r.Register("good", 20*time.Millisecond, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("held", 20*time.Millisecond, func(context.Context) error { heldRan.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterEverywhere("bad", 20*time.Millisecond, func(context.Context) error { return errors.New("boom") }); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if got := r.RunStates(); len(got) != 3 || !got[0].LastRun.IsZero() || got[0].Counts[jobs.OutcomeOK] != 0 {
		t.Fatalf("before Run: %+v", got)
	}
	runFor(t, func() bool {
		for _, s := range r.RunStates() {
			if s.Counts[jobs.OutcomeOK]+s.Counts[jobs.OutcomeFailed]+s.Counts[jobs.OutcomeSkipped] == 0 {
				return false
			}
		}
		return true
	}, r)
	st := map[string]jobs.RunState{}
	for _, s := range r.RunStates() {
		st[s.Name] = s
	}
	if g := st["good"]; g.Counts[jobs.OutcomeOK] == 0 || !g.LastOK || g.LastRun.Before(before) || !g.LastSuccess.Equal(g.LastRun) ||
		g.Counts[jobs.OutcomeFailed] != 0 || g.Counts[jobs.OutcomeSkipped] != 0 {
		t.Errorf("good: %+v", g)
	}
	if b := st["bad"]; b.Counts[jobs.OutcomeFailed] == 0 || b.LastOK || b.LastRun.Before(before) || !b.LastSuccess.IsZero() || b.Counts[jobs.OutcomeOK] != 0 {
		t.Errorf("bad: %+v", b)
	}
	if h := st["held"]; h.Counts[jobs.OutcomeSkipped] == 0 || !h.LastRun.IsZero() || h.Counts[jobs.OutcomeOK] != 0 || heldRan.Load() != 0 {
		t.Errorf("held: %+v (ran %d times)", h, heldRan.Load())
	}
}
