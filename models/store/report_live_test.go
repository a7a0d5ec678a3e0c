package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestWeekInProgressSameAsMinutes: the usage pages' week in progress
// (ReportWeekAt, the closed hours from the hourly sums and only the
// minutes after the last rolled hour) has exactly the figures computed
// from the minutes alone (database B, never rolled), in Berlin and in
// Kathmandu (whose midnight falls inside a UTC hour): before any roll,
// while the roll job lags a day and more behind the page's now, when it
// has caught up to the hour before now, after a late minute and a
// restamp of rolled hours, and once it has re-rolled them.
func TestWeekInProgressSameAsMinutes(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			a, b := storetest.Open(t, dialect), storetest.Open(t, dialect)
			ids := syntheticWeek(t, a)
			if syntheticWeek(t, b) != ids {
				t.Fatal("the two databases gave the fixture different IDs")
			}
			same := func(state string) {
				t.Helper()
				for _, v := range inProgressViews(t) {
					sameReports(t, state+" ("+v.w.Start.Location().String()+")", []*models.WeekData{pageWeek(t, a, v.w, v.asOf)},
						[]*models.WeekData{minutesWeek(t, b, v.w, v.asOf)})
				}
			}
			same("before any roll")
			rollAt(t, a, local(32, 15, 5)) // Wednesday: a day and more behind both views
			if to, err := a.UsageRolledTo(context.Background()); err != nil || !to.Equal(local(32, 14, 0)) {
				t.Fatalf("rolled to %v, %v; want Wednesday 14:00 (the test would prove nothing)", to, err)
			}
			same("roll job lagging")
			rollAt(t, a, local(35, 10, 17)) // up to the hour before the later view
			same("rolled up to the hour before now")

			lateMinute(t, a, ids)
			lateMinute(t, b, ids)
			same("late minute and restamp, not re-rolled")
			rollAt(t, a, local(35, 10, 17))
			same("re-rolled")
		})
	}
}

// inProgressView is a week read while it runs, as of asOf.
type inProgressView struct {
	w    models.Week
	asOf time.Time
}

// inProgressViews are 2026-W49 in Berlin and in Kathmandu, on Thursday
// morning and on Saturday, both mid-hour.
func inProgressViews(t *testing.T) []inProgressView {
	t.Helper()
	var out []inProgressView
	for _, loc := range []*time.Location{berlin, mustZone("Asia/Kathmandu")} {
		w, err := models.ParseWeek("2026-W49", loc)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, inProgressView{w, local(33, 9, 41)}, inProgressView{w, local(35, 10, 17)})
	}
	return out
}

// pageWeek is the week as the usage pages read it.
func pageWeek(t *testing.T, db *store.DB, w models.Week, asOf time.Time) *models.WeekData {
	t.Helper()
	d, err := db.ReportWeekAt(context.Background(), w, asOf, models.DefaultReportRules, false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// minutesWeek is the week computed afresh (on a database never rolled:
// from the minutes alone).
func minutesWeek(t *testing.T, db *store.DB, w models.Week, asOf time.Time) *models.WeekData {
	t.Helper()
	d, err := db.ReportWeek(context.Background(), w, asOf, models.DefaultReportRules)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// rollAt runs the roll job at now, keeping every minute.
func rollAt(t *testing.T, db *store.DB, now time.Time) {
	t.Helper()
	if _, err := db.RollUsage(context.Background(), now, keepAll, models.DefaultReportRules.BusyUtilPct); err != nil {
		t.Fatal(err)
	}
}
