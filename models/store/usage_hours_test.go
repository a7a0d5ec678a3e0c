package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
)

// rollNow is a time after the synthetic week and its neighbours, when all
// their hours are complete; keepAll keeps every minute.
var (
	rollNow = time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC)
	keepAll = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

func roll(t *testing.T, db *store.DB, busy float64) store.RollResult {
	t.Helper()
	res, err := db.RollUsage(context.Background(), rollNow, keepAll, busy)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// hourKey is one row of usage_hours.
type hourKey struct{ hour, gpu, booking int64 }

type hourSums struct{ minutes, counted, busy, held, nodata, anyone, unbooked int64 }

// TestUsageRollupsEqualMinuteSums sums the fixture week's minutes in Go,
// with docs/reports.md's definitions, and compares every row of the
// rollups with them.
func TestUsageRollupsEqualMinuteSums(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		syntheticWeek(t, db)
		res := roll(t, db, 5)
		if res.Rolled == 0 || res.RolledTo != models.CompleteBefore(rollNow) {
			t.Fatalf("roll = %+v, want every hour up to %d", res, models.CompleteBefore(rollNow))
		}
		if got, want := gpuHourRows(t, db), minuteSums(t, db, 5); !reflect.DeepEqual(got, want) {
			t.Errorf("usage_hours =\n %v\nminute sums =\n %v", got, want)
		}
		if got, want := userHourRows(t, db), userMinuteSums(t, db); !reflect.DeepEqual(got, want) {
			t.Errorf("user_usage_hours =\n %v\nminute sums =\n %v", got, want)
		}
		if again := roll(t, db, 5); again.Rolled != 0 || again.Rerolled != 0 {
			t.Errorf("second roll = %+v, want nothing to do", again)
		}
		// A new threshold rolls the kept hours again with it.
		if res := roll(t, db, 50); res.Rolled == 0 {
			t.Errorf("roll at 50 %% = %+v, want the hours rolled again", res)
		}
		if got, want := gpuHourRows(t, db), minuteSums(t, db, 50); !reflect.DeepEqual(got, want) {
			t.Errorf("usage_hours at 50 %% =\n %v\nminute sums =\n %v", got, want)
		}
	})
}

func gpuHourRows(t *testing.T, db *store.DB) map[hourKey]hourSums {
	t.Helper()
	var rows []struct {
		UnixHour, BookingID                                    int64
		GPUID                                                  int64 `gorm:"column:gpu_id"`
		Minutes, Counted, Busy, Held, Nodata, Anyone, Unbooked int64
	}
	if err := db.Gorm.Raw("SELECT * FROM usage_hours").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[hourKey]hourSums{}
	for _, r := range rows {
		out[hourKey{r.UnixHour, r.GPUID, r.BookingID}] = hourSums{r.Minutes, r.Counted, r.Busy, r.Held, r.Nodata, r.Anyone, r.Unbooked}
	}
	return out
}

// minuteSums is usage_hours as it should be, from the raw minutes.
func minuteSums(t *testing.T, db *store.DB, busy float64) map[hourKey]hourSums {
	t.Helper()
	var rows []struct {
		GPUID        int64 `gorm:"column:gpu_id"`
		Minute       time.Time
		UtilAvgPct   *float64
		BookingID    *int64
		BookerMemMib int64
		TopMemMib    int64
	}
	if err := db.Gorm.Raw("SELECT gpu_id, minute, util_avg_pct, booking_id, booker_mem_mib, top_mem_mib FROM gpu_usage_minutes").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	type gm struct {
		gpu int64
		min int64
	}
	var us []struct {
		GPUID  int64 `gorm:"column:gpu_id"`
		Minute time.Time
	}
	if err := db.Gorm.Raw("SELECT gpu_id, minute FROM gpu_user_usage_minutes WHERE user_id IS NOT NULL AND NOT booked").Scan(&us).Error; err != nil {
		t.Fatal(err)
	}
	unbooked := map[gm]bool{}
	for _, u := range us {
		unbooked[gm{u.GPUID, u.Minute.Unix()}] = true
	}
	b := func(c bool) int64 {
		if c {
			return 1
		}
		return 0
	}
	out := map[hourKey]hourSums{}
	for _, r := range rows {
		var booking int64
		if r.BookingID != nil {
			booking = *r.BookingID
		}
		k := hourKey{models.UnixHour(r.Minute), r.GPUID, booking}
		s := out[k]
		atBusy := r.UtilAvgPct != nil && *r.UtilAvgPct >= busy
		below := r.UtilAvgPct != nil && *r.UtilAvgPct < busy
		s.minutes++
		s.counted += b(atBusy || r.TopMemMib > 0)
		s.busy += b(booking != 0 && r.BookerMemMib > 0 && (atBusy || r.UtilAvgPct == nil))
		s.held += b(booking != 0 && r.BookerMemMib > 0 && below)
		s.nodata += b(booking != 0 && r.TopMemMib == 0 && atBusy)
		s.anyone += b(atBusy || (r.UtilAvgPct == nil && r.TopMemMib > 0))
		s.unbooked += b(unbooked[gm{r.GPUID, r.Minute.Unix()}])
		out[k] = s
	}
	return out
}

type userHourKey struct{ hour, gpu, user, booking int64 }

func userHourRows(t *testing.T, db *store.DB) map[userHourKey][2]int64 {
	t.Helper()
	var rows []struct {
		UnixHour, UserID, BookingID, Minutes, Unbooked int64
		GPUID                                          int64 `gorm:"column:gpu_id"`
	}
	if err := db.Gorm.Raw("SELECT * FROM user_usage_hours").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[userHourKey][2]int64{}
	for _, r := range rows {
		out[userHourKey{r.UnixHour, r.GPUID, r.UserID, r.BookingID}] = [2]int64{r.Minutes, r.Unbooked}
	}
	return out
}

func userMinuteSums(t *testing.T, db *store.DB) map[userHourKey][2]int64 {
	t.Helper()
	var rows []struct {
		GPUID     int64 `gorm:"column:gpu_id"`
		Minute    time.Time
		UserID    int64
		Booked    bool
		BookingID *int64
	}
	err := db.Gorm.Raw(`SELECT u.gpu_id, u.minute, u.user_id, u.booked, m.booking_id FROM gpu_user_usage_minutes u
		JOIN gpu_usage_minutes m ON m.gpu_id = u.gpu_id AND m.minute = u.minute WHERE u.user_id IS NOT NULL`).Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	out := map[userHourKey][2]int64{}
	for _, r := range rows {
		var booking int64
		if r.BookingID != nil {
			booking = *r.BookingID
		}
		k := userHourKey{models.UnixHour(r.Minute), r.GPUID, r.UserID, booking}
		s := out[k]
		s[0]++
		if !r.Booked {
			s[1]++
		}
		out[k] = s
	}
	return out
}

// reportViews are the reports the test compares: the fixture week and the
// next (its trend reaches back over the fixture), finished and in
// progress (clipped mid-hour), in Berlin and in Kathmandu, whose midnight
// (18:15 UTC) falls inside UTC hours.
func reportViews(t *testing.T, db *store.DB) []*models.WeekData {
	t.Helper()
	kathmandu := mustZone("Asia/Kathmandu")
	var out []*models.WeekData
	for _, v := range []struct {
		week string
		loc  *time.Location
		asOf time.Time
	}{
		{"2026-W49", berlin, time.Time{}},
		{"2026-W49", berlin, local(33, 9, 41)},
		{"2026-W50", berlin, time.Time{}},
		{"2026-W49", kathmandu, time.Time{}},
		{"2026-W49", kathmandu, local(35, 10, 17)},
	} {
		w, err := models.ParseWeek(v.week, v.loc)
		if err != nil {
			t.Fatal(err)
		}
		asOf := v.asOf
		if asOf.IsZero() {
			asOf = w.End
		}
		d, err := db.ReportWeek(context.Background(), w, asOf, models.DefaultReportRules)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// sameReports compares the reports' figures field by field; the users'
// and memberships' creation times differ between two databases filled one
// after the other, and are not figures.
func sameReports(t *testing.T, what string, got, want []*models.WeekData) {
	t.Helper()
	for i := range got {
		g, w := reflect.ValueOf(got[i]).Elem(), reflect.ValueOf(want[i]).Elem()
		for f := 0; f < g.NumField(); f++ {
			name := g.Type().Field(f).Name
			if !g.Type().Field(f).IsExported() || name == "Users" || name == "Memberships" {
				continue
			}
			if !reflect.DeepEqual(g.Field(f).Interface(), w.Field(f).Interface()) {
				t.Errorf("%s: report %d (%s as of %v): %s = %+v, want %+v", what, i, got[i].Week, got[i].AsOf, name, g.Field(f).Interface(), w.Field(f).Interface())
			}
		}
		if len(got[i].Users) != len(want[i].Users) || len(got[i].Memberships) != len(want[i].Memberships) {
			t.Errorf("%s: report %d: users or memberships differ", what, i)
		}
	}
}

// lateMinute writes, after the fact, one more minute of bob's unbooked use
// on g4 (Sat 10:30, an hour already rolled) and books carol's unbooked hour
// on g1 on Wednesday for her after it happened (a restamp of rolled hours).
func lateMinute(t *testing.T, db *store.DB, ids weekIDs) {
	t.Helper()
	f := &reportFixture{t: t, db: db}
	var gpus []int64
	if err := db.Gorm.Raw("SELECT id FROM gpus ORDER BY id").Scan(&gpus).Error; err != nil {
		t.Fatal(err)
	}
	f.gpus = gpus
	f.use(3, local(35, 10, 30), local(35, 10, 31), 20, "bob", ids.bob, 2000)
	f.book(ids.carol, models.StatusConfirmed, local(32, 14, 0), local(32, 14, 30), 0)
}

// TestReportSameWithRollups: every report reads the same figures from the
// minutes alone (database B, never rolled) as from the rollups and the
// minutes after them (database A), before and after a late minute and a
// restamp of rolled hours, and before and after the job re-rolls them.
func TestReportSameWithRollups(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			a, b := storetest.Open(t, dialect), storetest.Open(t, dialect)
			ids := syntheticWeek(t, a)
			if syntheticWeek(t, b) != ids {
				t.Fatal("the two databases gave the fixture different IDs")
			}
			minutesOnly := reportViews(t, b)
			sameReports(t, "before rolling", reportViews(t, a), minutesOnly)
			roll(t, a, 5)
			sameReports(t, "rolled", reportViews(t, a), minutesOnly)

			lateMinute(t, a, ids)
			lateMinute(t, b, ids)
			minutesOnly2 := reportViews(t, b)
			if reflect.DeepEqual(minutesOnly2, minutesOnly) {
				t.Fatal("the late minute and the booking changed no report: the test would prove nothing")
			}
			var dirty int64
			a.Gorm.Raw("SELECT COUNT(*) FROM usage_rollup_dirty").Scan(&dirty)
			if dirty == 0 {
				t.Error("no dirty hour recorded for the late minute and the restamp")
			}
			sameReports(t, "late minute, not re-rolled", reportViews(t, a), minutesOnly2)
			res := roll(t, a, 5)
			if res.Rerolled == 0 || res.Rolled != 0 {
				t.Errorf("roll after the late minute = %+v, want only re-rolled hours", res)
			}
			a.Gorm.Raw("SELECT COUNT(*) FROM usage_rollup_dirty").Scan(&dirty)
			if dirty != 0 {
				t.Errorf("%d dirty marks left after the re-roll", dirty)
			}
			sameReports(t, "re-rolled", reportViews(t, a), minutesOnly2)
			if got, want := gpuHourRows(t, a), minuteSums(t, a, 5); !reflect.DeepEqual(got, want) {
				t.Errorf("usage_hours after the re-roll =\n %v\nminute sums =\n %v", got, want)
			}
		})
	}
}

// TestReportReadsRollupsAfterMinutesPruned: once the minutes of rolled
// hours are pruned, the report still has their figures.
func TestReportReadsRollupsAfterMinutesPruned(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		syntheticWeek(t, db)
		want := reportWeek(t, db, "2026-W49")
		roll(t, db, 5)
		if _, err := telemetry.New(db).PruneUsage(context.Background(), rollNow); err != nil {
			t.Fatal(err)
		}
		var n int64
		db.Gorm.Raw("SELECT COUNT(*) FROM gpu_usage_minutes").Scan(&n)
		if n != 0 {
			t.Fatalf("%d minutes left after pruning", n)
		}
		got := reportWeek(t, db, "2026-W49")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("after pruning the minutes:\n got %+v\nwant %+v", got, want)
		}
		if n, err := db.PruneUsageHours(context.Background(), rollNow); err != nil || n == 0 {
			t.Errorf("prune hours = %d, %v; want the rows deleted", n, err)
		}
		if got := reportWeek(t, db, "2026-W49"); got.WeekFigures(0).BusyMin != 0 || sum(got.ClusterBusyMin) != 0 {
			t.Errorf("after pruning the hours the report still has busy minutes: %v", got.ClusterBusyMin)
		}
	})
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}
