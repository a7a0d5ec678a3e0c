package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// trendFixture is the synthetic week, two more bookings around it and the
// rollups of all of it: dave's two hours inside 2026-W48, and carol's
// booking from Sunday 23:00 of 2026-W49 to Monday 00:30 of 2026-W50, busy
// only on the Sunday: not a no-show of W50, which only W49's rolled hours
// can tell once W49 is read from its snapshot.
func trendFixture(t *testing.T, db *store.DB) weekIDs {
	t.Helper()
	ids := syntheticWeek(t, db)
	f := &reportFixture{t: t, db: db}
	if err := db.Gorm.Raw("SELECT id FROM gpus ORDER BY id").Scan(&f.gpus).Error; err != nil {
		t.Fatal(err)
	}
	f.book(ids.dave, models.StatusConfirmed, local(28, 10, 0), local(28, 12, 0), 2)
	f.use(2, local(28, 10, 0), local(28, 11, 0), 60, "dave", ids.dave, 1000)
	f.book(ids.carol, models.StatusConfirmed, local(36, 23, 0), local(37, 0, 30), 1)
	f.use(1, local(36, 23, 0), local(36, 23, 30), 80, "carol", ids.carol, 1000)
	roll(t, db, 5)
	return ids
}

func berlinWeek(t *testing.T, name string) models.Week {
	t.Helper()
	w, err := models.ParseWeek(name, berlin)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// freeze freezes the ended weeks as the weekly send does.
func freeze(t *testing.T, db *store.DB, weeks ...string) {
	t.Helper()
	for _, name := range weeks {
		d, err := db.ReportWeekAt(context.Background(), berlinWeek(t, name), rollNow, models.DefaultReportRules, true)
		if err != nil || d.State != models.WeekFrozen {
			t.Fatalf("freeze %s: state %v, %v", name, d.State, err)
		}
	}
}

// cancelInside cancels the confirmed bookings that lie inside week name,
// without a recompute: the usage of a frozen week changing afterwards.
func cancelInside(t *testing.T, db *store.DB, name string) {
	t.Helper()
	w := berlinWeek(t, name)
	r := db.Gorm.Exec("UPDATE bookings SET status = 'cancelled' WHERE status = 'confirmed' AND starts_at >= ? AND ends_at <= ?",
		w.Start.UTC(), w.End.UTC())
	if r.Error != nil || r.RowsAffected == 0 {
		t.Fatalf("cancel the bookings of %s: %d, %v", name, r.RowsAffected, r.Error)
	}
}

// pageAndComputed are the usage page's week in progress (2026-W50, Wednesday
// 02:17) and the same week computed from the usage alone.
func pageAndComputed(t *testing.T, db *store.DB) (page, computed *models.WeekData) {
	t.Helper()
	ctx := context.Background()
	w := berlinWeek(t, "2026-W50")
	now := w.Start.Add(50*time.Hour + 17*time.Minute)
	page, err := db.ReportWeekAt(ctx, w, now, models.DefaultReportRules, false)
	if err != nil {
		t.Fatal(err)
	}
	if computed, err = db.ReportWeek(ctx, w, now, models.DefaultReportRules); err != nil {
		t.Fatal(err)
	}
	return page, computed
}

// TestWeekInProgressReadsClosedWeeksFromSnapshots: the week in progress
// reads its trend weeks from their snapshots once they are frozen, with
// the same figures as computing them, and keeps showing the frozen figures
// when the usage of a frozen week changes afterwards.
func TestWeekInProgressReadsClosedWeeksFromSnapshots(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ids := trendFixture(t, db)
		_, want := pageAndComputed(t, db)
		if n := want.ByUser[ids.carol][0].NoShows; n != 0 {
			t.Fatalf("carol has %d no-shows on the Monday of W50 from the usage", n)
		}
		freeze(t, db, "2026-W48", "2026-W49")
		page, _ := pageAndComputed(t, db)
		sameReports(t, "trend from the snapshots", []*models.WeekData{page}, []*models.WeekData{want})

		cancelInside(t, db, "2026-W49")
		page, computed := pageAndComputed(t, db)
		sameReports(t, "after W49's bookings changed", []*models.WeekData{page}, []*models.WeekData{want})
		if computed.ByUser[ids.alice][models.TrendSpan(1)].BookedSec == want.ByUser[ids.alice][models.TrendSpan(1)].BookedSec {
			t.Fatal("cancelling W49's bookings changed no computed figure: the test would prove nothing")
		}
	})
}

// TestWeekInProgressWithUnreadableSnapshot: a trend week whose snapshot
// cannot be read is computed from the usage, between two weeks that are
// not (W47 has no snapshot, W48's is read).
func TestWeekInProgressWithUnreadableSnapshot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ids := trendFixture(t, db)
		_, want := pageAndComputed(t, db)
		freeze(t, db, "2026-W48", "2026-W49")
		if err := db.Gorm.Exec("UPDATE report_weeks SET data = '{' WHERE week = '2026-W49'").Error; err != nil {
			t.Fatal(err)
		}
		cancelInside(t, db, "2026-W48")
		page, computed := pageAndComputed(t, db)
		sameReports(t, "W48 frozen, W49 unreadable", []*models.WeekData{page}, []*models.WeekData{want})
		if computed.ByUser[ids.dave][models.TrendSpan(2)].BookedSec == want.ByUser[ids.dave][models.TrendSpan(2)].BookedSec {
			t.Fatal("cancelling W48's bookings changed no computed figure: the test would prove nothing")
		}
	})
}

// TestWeekInProgressSeesRecomputedSnapshot: the trend weeks are kept
// decoded (report_trend_cache.go); a recompute of a frozen week, even at
// the same frozen_at, is what the next view shows.
func TestWeekInProgressSeesRecomputedSnapshot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		trendFixture(t, db)
		freeze(t, db, "2026-W48", "2026-W49")
		before, _ := pageAndComputed(t, db)
		cancelInside(t, db, "2026-W49")
		noDiff := func(_, _ *models.WeekData) []models.FigureChange { return nil }
		_, _, _, err := db.RecomputeWeek(context.Background(), berlinWeek(t, "2026-W49"), rollNow, models.DefaultReportRules,
			models.Actor{Label: "test"}, noDiff)
		if err != nil {
			t.Fatal(err)
		}
		page, computed := pageAndComputed(t, db)
		sameReports(t, "after W49's recompute", []*models.WeekData{page}, []*models.WeekData{computed})
		if reflect.DeepEqual(page.ByUser, before.ByUser) {
			t.Fatal("the recompute changed no figure of the page: the test would prove nothing")
		}
	})
}
