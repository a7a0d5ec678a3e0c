package store_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func TestTryLease(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		steps := []struct {
			owner string
			at    time.Duration
			want  bool
		}{
			{"a", 0, true},
			{"b", 30 * time.Second, false},  // a holds it
			{"a", 30 * time.Second, true},   // a renews until 1m30s
			{"b", 80 * time.Second, false},  // still a's
			{"b", 91 * time.Second, true},   // a's lease ran out
			{"a", 100 * time.Second, false}, // now b's
		}
		for i, s := range steps {
			got, err := at(db, t0.Add(s.at)).TryLease(ctx, "maintenance", s.owner, time.Minute)
			if err != nil || got != s.want {
				t.Fatalf("step %d (%s at %v): %v, %v; want %v", i, s.owner, s.at, got, err, s.want)
			}
		}
		if err := db.ReleaseLease(ctx, "maintenance", "a", 0); err != nil { // not a's: nothing happens
			t.Fatal(err)
		}
		if got, err := at(db, t0.Add(101*time.Second)).TryLease(ctx, "maintenance", "a", time.Minute); err != nil || got {
			t.Fatalf("a released b's lease (%v)", err)
		}
		if err := db.ReleaseLease(ctx, "maintenance", "b", 0); err != nil {
			t.Fatal(err)
		}
		if got, _ := at(db, t0.Add(102*time.Second)).TryLease(ctx, "maintenance", "a", time.Minute); !got {
			t.Fatal("lease not free after release")
		}
	})
}

// TestClaimPeriodConcurrent: ten processes' claimers race for one week;
// exactly one wins, on both databases.
func TestClaimPeriodConcurrent(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			url := storetest.MigratedURL(t, dialect)
			first := at(storetest.OpenURL(t, url), t0)
			var wins atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 10 {
				db := first
				if i%2 == 1 {
					db = at(storetest.OpenURL(t, url), t0)
				}
				wg.Go(func() {
					<-start
					ok, err := db.ClaimPeriod(ctx, "report", "2026-W49", fmt.Sprintf("p%d", i), time.Hour)
					if err != nil {
						t.Error(err)
					}
					if ok {
						wins.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			if got := wins.Load(); got != 1 {
				t.Errorf("%d claimers won 2026-W49, want exactly 1", got)
			}
		})
	}
}

func TestClaimPeriodLifecycle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		claim := func(period, owner string, after time.Duration) bool {
			t.Helper()
			ok, err := at(db, t0.Add(after)).ClaimPeriod(ctx, "report", period, owner, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if !claim("2026-W49", "a", 0) {
			t.Fatal("first claim lost")
		}
		if claim("2026-W49", "b", time.Minute) {
			t.Fatal("second claim of a running period won")
		}
		// a dies mid-run; after its lease b takes the run over and finishes it.
		if !claim("2026-W49", "b", 61*time.Minute) {
			t.Fatal("abandoned run not taken over")
		}
		if err := db.FinishPeriod(ctx, "report", "2026-W49", "a"); err == nil {
			t.Fatal("a finished a run b had taken over")
		}
		if err := db.FinishPeriod(ctx, "report", "2026-W49", "b"); err != nil {
			t.Fatal(err)
		}
		if claim("2026-W49", "c", 10*time.Hour) {
			t.Fatal("finished period claimed again")
		}
		if claim("2026-W48", "c", 10*time.Hour) {
			t.Fatal("an older period was claimed")
		}
		if !claim("2026-W50", "c", 7*24*time.Hour) {
			t.Fatal("next period not claimable")
		}
		leases, err := db.JobLeases(ctx)
		if err != nil || len(leases) != 1 {
			t.Fatalf("leases %+v, %v", leases, err)
		}
		if l := leases[0]; l.Name != "report" || l.Owner != "c" || l.LastPeriod != "2026-W50" || l.PeriodDone ||
			l.LastRunAt == nil || !l.LastRunAt.Equal(t0.Add(7*24*time.Hour)) || !l.LeaseUntil.Equal(t0.Add(7*24*time.Hour+time.Hour)) {
			t.Errorf("lease row %+v", l)
		}
	})
}
