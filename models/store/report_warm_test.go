package store_test

import (
	"context"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestWarmUsagePagesAfterRoll: once a roll has moved the rolled hours on,
// WarmUsagePages reads the rolled part of the week in progress viewed
// lately, so that the next view finds it kept and reads no rolled hour;
// that view has the figures computed from the minutes alone. With no
// view yet, or nothing changed since, it reads nothing.
func TestWarmUsagePagesAfterRoll(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			a, b := storetest.Open(t, dialect), storetest.Open(t, dialect)
			if syntheticWeek(t, a) != syntheticWeek(t, b) {
				t.Fatal("the two databases gave the fixture different IDs")
			}
			ctx := context.Background()
			warm := func(state string, want int64) {
				t.Helper()
				if err := a.WarmUsagePages(ctx); err != nil {
					t.Fatal(err)
				}
				if got := a.RolledReads(); got != want {
					t.Errorf("%s: %d rolled parts read, want %d", state, got, want)
				}
			}
			v := inProgressViews(t)[1] // Saturday 10:17 in Berlin
			rollAt(t, a, local(35, 9, 17))
			warm("no view yet", 0)
			pageWeek(t, a, v.w, v.asOf)
			warm("viewed, nothing rolled since", 1)
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
