package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestWarmUsagePagesAfterRoll: WarmUsagePages reads the rolled part of
// the week the pages open on, viewed or not, and again once a roll has
// moved the rolled hours on, so that the next view finds it kept and
// reads no rolled hour; that view has the figures computed from the
// minutes alone. With nothing changed since, it reads nothing.
func TestWarmUsagePagesAfterRoll(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			a, b := twinWeeks(t, dialect)
			ctx := context.Background()
			v := inProgressViews(t)[1] // Saturday 10:17 in Berlin
			warm := func(state string, want int64) {
				t.Helper()
				if err := a.WarmUsagePages(ctx, v.asOf, berlin, models.DefaultReportRules); err != nil {
					t.Fatal(err)
				}
				if got := a.RolledReads(); got != want {
					t.Errorf("%s: %d rolled parts read, want %d", state, got, want)
				}
			}
			rollAt(t, a, local(35, 9, 17))
			warm("no view yet", 1)
			warm("nothing rolled since", 1)
			pageWeek(t, a, v.w, v.asOf)
			if n := a.RolledReads(); n != 1 {
				t.Errorf("the first view after the warm read the rolled hours again: %d parts read, want 1", n)
			}
			rollAt(t, a, local(35, 10, 17)) // the hour before the view's
			warm("rolled since the view", 2)
			got := pageWeek(t, a, v.w, v.asOf)
			if n := a.RolledReads(); n != 2 {
				t.Errorf("the view after the warm read the rolled hours again: %d parts read, want 2", n)
			}
			sameReports(t, "warmed", []*models.WeekData{got}, []*models.WeekData{minutesWeek(t, b, v.w, v.asOf)})
		})
	}
}

// TestWarmUsagePagesKeepTheOpenWeek: the warm keeps the week every usage
// page opens on ready with no view before it. On a cluster whose weeks
// are kept (a fleet: stood for here by lowering the threshold), it
// computes the week, so that the first view — after a start, or after a
// quiet spell — gets that week (as of the warm's now, not its own) and
// reads no rolled hour, with the figures computed from the minutes alone.
// On a small cluster it reads the rolled part only.
func TestWarmUsagePagesKeepTheOpenWeek(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			a, b := twinWeeks(t, dialect)
			ctx := context.Background()
			v := inProgressViews(t)[1] // Saturday 10:17 in Berlin
			rollAt(t, a, local(35, 9, 17))
			warm := func(state string, reads, computed int64) {
				t.Helper()
				if err := a.WarmUsagePages(ctx, v.asOf, berlin, models.DefaultReportRules); err != nil {
					t.Fatal(err)
				}
				if got := a.RolledReads(); got != reads {
					t.Errorf("%s: %d rolled parts read, want %d", state, got, reads)
				}
				if got := a.LiveComputations(); got != computed {
					t.Errorf("%s: %d weeks computed, want %d", state, got, computed)
				}
			}
			warm("a small cluster", 1, 0)
			a.KeepLiveWeeksFrom(1, time.Nanosecond)
			warm("a fleet, nobody viewed yet", 1, 1)
			got := pageWeek(t, a, v.w, v.asOf.Add(time.Minute))
			if !got.AsOf.Equal(v.asOf) {
				t.Fatalf("the first view got the week as of %s, want the warm's %s", got.AsOf, v.asOf)
			}
			if n := a.RolledReads(); n != 1 {
				t.Errorf("the first view after the warm read the rolled hours again: %d parts read, want 1", n)
			}
			sameReports(t, "kept by the warm", []*models.WeekData{got}, []*models.WeekData{minutesWeek(t, b, v.w, v.asOf)})
		})
	}
}

// twinWeeks is two databases of dialect with the synthetic week: a for
// the warm and the views, b never rolled, for the figures from the
// minutes alone.
func twinWeeks(t *testing.T, dialect string) (a, b *store.DB) {
	t.Helper()
	a, b = storetest.Open(t, dialect), storetest.Open(t, dialect)
	if syntheticWeek(t, a) != syntheticWeek(t, b) {
		t.Fatal("the two databases gave the fixture different IDs")
	}
	return a, b
}
