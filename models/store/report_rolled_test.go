package store_test

import (
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestKeptRolledHoursFollowChanges: a replica keeps the part of the week
// in progress that it read from the rolled hours (report_rolled.go). The
// usage pages of database A, which keeps it, read the same figures as
// database B reads from the minutes alone after every change that touches
// hours already rolled and kept: a booking cancelled, a booking ended
// early, a booking made for use that already ran, a GPU's weight — each
// before the job re-rolls the hours and after.
func TestKeptRolledHoursFollowChanges(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			a, b := storetest.Open(t, dialect), storetest.Open(t, dialect)
			ids := syntheticWeek(t, a)
			if syntheticWeek(t, b) != ids {
				t.Fatal("the two databases gave the fixture different IDs")
			}
			// One view, Saturday in Berlin: A keeps a few weeks, and
			// more views would push out the one a stale key would find.
			v := inProgressViews(t)[1]
			same := func(state string) {
				t.Helper()
				sameReports(t, state, []*models.WeekData{pageWeek(t, a, v.w, v.asOf)}, []*models.WeekData{minutesWeek(t, b, v.w, v.asOf)})
			}
			rollAt(t, a, local(35, 10, 17))
			same("rolled and kept")
			for _, c := range []struct {
				name   string
				change func(*testing.T, *store.DB)
			}{
				{"booking cancelled", func(t *testing.T, db *store.DB) { cancelRolled(t, db, ids.alice) }},
				{"booking ended early", func(t *testing.T, db *store.DB) { endRolled(t, db, ids.bob) }},
				{"booking made after its use", func(t *testing.T, db *store.DB) { lateMinute(t, db, ids) }},
				{"GPU weight", func(t *testing.T, db *store.DB) { halveWeight(t, db) }},
			} {
				c.change(t, a)
				c.change(t, b)
				same(c.name + ", not re-rolled")
				rollAt(t, a, local(35, 10, 17))
				same(c.name + ", re-rolled")
			}
		})
	}
}

// cancelRolled cancels user's Tuesday booking (10:00–12:00, on g0), whose
// hours the job has rolled, and restamps its minutes as a cancel does.
func cancelRolled(t *testing.T, db *store.DB, user int64) {
	t.Helper()
	f := &reportFixture{t: t, db: db}
	f.exec("UPDATE bookings SET status = ? WHERE user_id = ? AND starts_at = ?", models.StatusCancelled, user, local(30, 10, 0).UTC())
	f.exec("DELETE FROM booking_gpus WHERE booking_id IN (SELECT id FROM bookings WHERE status = ?)", models.StatusCancelled)
	f.restamp(local(30, 10, 0), local(30, 12, 0))
}

// endRolled ends user's Monday-week booking on g2 (Wednesday 9:00–11:00)
// at 10:00, after its hours were rolled.
func endRolled(t *testing.T, db *store.DB, user int64) {
	t.Helper()
	f := &reportFixture{t: t, db: db}
	var id int64
	if err := db.Gorm.Raw("SELECT id FROM bookings WHERE user_id = ? AND starts_at = ?", user, local(32, 9, 0).UTC()).Scan(&id).Error; err != nil || id == 0 {
		t.Fatalf("booking: %d, %v", id, err)
	}
	f.release(id, local(32, 10, 0))
}

// halveWeight makes the first GPU count as half a GPU.
func halveWeight(t *testing.T, db *store.DB) {
	t.Helper()
	f := &reportFixture{t: t, db: db}
	f.exec("UPDATE gpus SET weight = 0.5 WHERE id = (SELECT MIN(id) FROM gpus)")
}
