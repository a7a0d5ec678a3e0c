package store_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func reportWeek(t *testing.T, db *store.DB, week string) *models.WeekData {
	t.Helper()
	w, err := models.ParseWeek(week, berlin)
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.ReportWeek(context.Background(), w, w.End, models.DefaultReportRules)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestReportSyntheticWeek checks every figure of the fixture's table on
// both databases.
func TestReportSyntheticWeek(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ids := syntheticWeek(t, db)
		d := reportWeek(t, db, "2026-W49")
		want := map[int64]models.Figures{
			// Mean utilisation of the booked minutes (tenths of a percent):
			// alice 60×70 % + 120×80 % + 60×50 % + 180×0 % over 420 minutes
			// = 40 %; bob 120×0 % + 120×90 % over 240 = 45 %; carol
			// 2×60×0 % + 120×60 % over 240 = 30 %.
			ids.alice: {BookedSec: 7 * 3600, BusyMin: 240, HeldIdleMin: 180, UtilMin: 420, UtilTenths: 168000},
			ids.bob: {BookedSec: 4 * 3600, BusyMin: 120, UnbookedMin: 30, GivenBackSec: 6 * 3600, NoShows: 1, Preempted: 1,
				UtilMin: 240, UtilTenths: 108000},
			ids.carol: {BookedSec: 4 * 3600, BusyMin: 120, UnbookedMin: 60, GivenBackSec: 10 * 3600, AutoGivenBackSec: 10 * 3600, NoShows: 1,
				PriorityMade: 2, PriorityApproved: 1, UtilMin: 240, UtilTenths: 72000},
			ids.dave: {},
		}
		for id, w := range want {
			if got := d.WeekFigures(id); got != w {
				t.Errorf("user %d: got %+v, want %+v", id, got, w)
			}
		}
		alice := d.WeekFigures(ids.alice)
		if !near(alice.Efficiency(), 4.0/7) || !near(alice.IdleHours(), 3) || !near(alice.HeldIdleHours(), 3) {
			t.Errorf("alice efficiency %v idle %v held %v, want 4/7, 3 and 3", alice.Efficiency(), alice.IdleHours(), alice.HeldIdleHours())
		}
		if d.WeekFigures(ids.dave).Active() {
			t.Error("dave has no activity but Active() is true")
		}
		// Days: alice's Monday holds the W48 booking's last hour and the 2 h booking.
		days := d.DaysOf(ids.alice)
		if days[0].Figures.BookedSec != 3*3600 || days[0].Figures.BusyMin != 180 || days[1].Figures.BookedSec != 4*3600 {
			t.Errorf("alice's days: %+v", days[:2])
		}
		if sun := d.DaysOf(ids.carol)[6].Figures; sun.BookedSec != 2*3600 || sun.BusyMin != 120 {
			t.Errorf("carol's Sunday: %+v, want 2 h booked and busy", sun)
		}
		// Trend: W48 holds alice's first hour; the next week holds carol's last two.
		trend := d.Trend(ids.alice)
		if trend[2].Week.String() != "2026-W48" || trend[2].Figures.BookedSec != 3600 || trend[2].Figures.BusyMin != 60 {
			t.Errorf("alice's W48: %+v", trend[2])
		}
		if next := reportWeek(t, db, "2026-W50").WeekFigures(ids.carol); next.BookedSec != 2*3600 || next.BusyMin != 120 || next.NoShows != 0 {
			t.Errorf("carol's W50: %+v", next)
		}
		checkCluster(t, d, ids)
		checkShares(t, d, ids)
		checkHeat(t, d)
	})
}

func checkCluster(t *testing.T, d *models.WeekData, ids weekIDs) {
	t.Helper()
	s := d.ClusterSummary()
	if s.PendingRequests != 1 {
		t.Errorf("pending requests %d, want 1", s.PendingRequests)
	}
	if s.GPUCount != 4 || s.CapacityHours != 4*168 || s.Booked.BookedSec != 15*3600 || s.Booked.BusyMin != 480 {
		t.Errorf("cluster: %+v", s)
	}
	if !near(s.ClusterBusyHours, 580.0/60) || !near(s.Utilisation, 580.0/60/672) || !near(s.BookedShare, 15.0/672) {
		t.Errorf("cluster busy %v utilisation %v booked share %v", s.ClusterBusyHours, s.Utilisation, s.BookedShare)
	}
	// Idle: alice 3 h, bob 2 h, carol 2 h.
	if len(s.TopIdle) != 3 || s.TopIdle[0].User.ID != ids.alice || s.TopIdle[0].Hours != 3 {
		t.Errorf("top idle: %+v", s.TopIdle)
	}
	if len(s.TopUnbooked) != 2 || s.TopUnbooked[0].User.ID != ids.carol || s.TopUnbooked[0].Hours != 1 || s.TopUnbooked[1].Hours != 0.5 {
		t.Errorf("top unbooked: %+v", s.TopUnbooked)
	}
}

func checkShares(t *testing.T, d *models.WeekData, ids weekIDs) {
	t.Helper()
	byID := map[int64]models.User{}
	for _, u := range d.Users {
		byID[u.ID] = u
	}
	a := d.UserReport(byID[ids.alice])
	if !near(a.ShareBooked, 7.0/15) || !near(a.ShareBusy, 4.0/8) || !near(a.Entitled, 0.25) {
		t.Errorf("alice shares: booked %v busy %v entitled %v", a.ShareBooked, a.ShareBusy, a.Entitled)
	}
	// Decayed usage: charged hours (busy booked at 1, idle booked at the
	// default idle weight 2, unbooked at the default weight 1.5) ×
	// 2^(−age/7 d), age from each span's middle to the week's end (day i of
	// the week: 6.5−i days; W48: 10.5 days). alice's Tuesday is 1 h busy
	// and 3 h idle; bob's Wednesday and carol's Friday are no-shows, all
	// idle; bob's pre-empted booking is no late cancel of his. bob's
	// unbooked half hour ran on Saturday, carol's unbooked hour on Wednesday.
	w := func(days float64) float64 { return math.Exp2(-days / 7) }
	ua := 3*w(6.5) + (1+2*3)*w(5.5) + 1*w(10.5)
	ub := 2*2*w(4.5) + 2*w(3.5) + 1.5*0.5*w(1.5)
	uc := 2*2*w(2.5) + 2*w(0.5) + 1.5*1*w(4.5)
	if wantU := ua / (ua + ub + uc); !near(a.UsageShare, wantU) || !near(a.FairShare, math.Exp2(-wantU/0.25)) {
		t.Errorf("alice U %v F %v, want U %v F %v", a.UsageShare, a.FairShare, wantU, math.Exp2(-wantU/0.25))
	}
	if a.TeamName != "A" || a.Rank != 1 || a.RankOf != 2 || a.TeamSize != 2 {
		t.Errorf("alice team %q rank %d of %d", a.TeamName, a.Rank, a.TeamSize)
	}
	// dave did nothing: team B's half goes to carol, its one active member.
	if dv := d.UserReport(byID[ids.dave]); dv.Rank != 2 || dv.RankOf != 2 || dv.FairShare != 1 || dv.Entitled != 0 || dv.Active() {
		t.Errorf("dave: rank %d of %d F %v S %v active %v", dv.Rank, dv.RankOf, dv.FairShare, dv.Entitled, dv.Active())
	}
	table := d.TeamTable(ids.teamA)
	if len(table) != 2 || table[0].User.ID != ids.alice || table[1].User.ID != ids.bob || table[1].Rank != 2 {
		t.Errorf("team A table: %+v", table)
	}
}

func checkHeat(t *testing.T, d *models.WeekData) {
	t.Helper()
	h := d.HeatMap()
	// Monday 10:00 is in the window 4 times, 4 GPUs: 60 busy of 960 GPU-minutes.
	// Sunday 23:00: alice's W48 hour and carol's W49 hour, 120 of 960.
	if !near(h.Load[0][10], 60.0/960) || !near(h.Load[6][23], 120.0/960) || !near(h.Max, 120.0/960) || h.Load[2][3] != 0 {
		t.Errorf("heat: Mon 10 %v Sun 23 %v max %v", h.Load[0][10], h.Load[6][23], h.Max)
	}
}

// TestReportDSTWeek: 2026-W43 in Berlin ends on the Sunday the clocks go
// back (25 Oct, 03:00 CEST → 02:00 CET): the week is 169 h and its Sunday
// 25 h. alice books g1 Sat 22:00 CEST (20:00 UTC) to Sun 06:00 CET (05:00
// UTC), 9 real hours, all busy: 2 h on Saturday, 7 h on Sunday.
func TestReportDSTWeek(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := &reportFixture{t: t, db: db}
		f.node(4)
		alice := f.user("alice")
		from := time.Date(2026, 10, 24, 22, 0, 0, 0, berlin)
		to := time.Date(2026, 10, 25, 6, 0, 0, 0, berlin)
		f.book(alice, models.StatusConfirmed, from, to, 0)
		f.use(0, from, to, 100, "alice", alice, 1000)
		d := reportWeek(t, db, "2026-W43")
		if got := d.WeekFigures(alice); got.BookedSec != 9*3600 || got.BusyMin != 540 {
			t.Errorf("week: %+v, want 9 h booked and busy", got)
		}
		days := d.DaysOf(alice)
		if days[5].Figures.BookedSec != 2*3600 || days[6].Figures.BookedSec != 7*3600 || days[6].Figures.BusyMin != 420 {
			t.Errorf("Sat %+v Sun %+v", days[5].Figures, days[6].Figures)
		}
		s := d.ClusterSummary()
		if s.CapacityHours != 4*169 || !near(s.ClusterBusyHours, 9) {
			t.Errorf("capacity %v busy %v", s.CapacityHours, s.ClusterBusyHours)
		}
		// Sunday 02:00 happened twice in W43 (plus once in each of the three
		// weeks before): 5 hours of 4 GPUs, both W43 ones busy. 03:00: 4 hours.
		h := d.HeatMap()
		if !near(h.Load[6][2], 120.0/(5*60*4)) || !near(h.Load[6][3], 60.0/(4*60*4)) {
			t.Errorf("heat Sun 02 %v Sun 03 %v", h.Load[6][2], h.Load[6][3])
		}
	})
}

// TestReportZoneOffHours: in Asia/Kathmandu (UTC+5:45) local midnight falls
// at 18:15 UTC, between whole hours. alice books g1 Tue 23:00 to Wed 01:00
// local, all busy: the minutes must split 60/60 between Tuesday and
// Wednesday, not by the UTC hour they fall in.
func TestReportZoneOffHours(t *testing.T) {
	t.Parallel()
	kathmandu := mustZone("Asia/Kathmandu")
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := &reportFixture{t: t, db: db}
		f.node(1)
		alice := f.user("alice")
		from := time.Date(2026, 12, 1, 23, 0, 0, 0, kathmandu)
		to := from.Add(2 * time.Hour)
		f.book(alice, models.StatusConfirmed, from, to, 0)
		f.use(0, from, to, 90, "alice", alice, 1000)
		w, err := models.ParseWeek("2026-W49", kathmandu)
		if err != nil {
			t.Fatal(err)
		}
		d, err := db.ReportWeek(context.Background(), w, w.End, models.DefaultReportRules)
		if err != nil {
			t.Fatal(err)
		}
		days := d.DaysOf(alice)
		if days[1].Figures.BusyMin != 60 || days[2].Figures.BusyMin != 60 || d.WeekFigures(alice).BusyMin != 120 {
			t.Errorf("Tue %+v Wed %+v", days[1].Figures, days[2].Figures)
		}
		if d.ClusterBusyMin[1] != 60 || d.ClusterBusyMin[2] != 60 {
			t.Errorf("cluster per day %v, want 60 on Tuesday and on Wednesday", d.ClusterBusyMin)
		}
	})
}

// TestReportWeekInProgress: on Wednesday 12:00 of W49, a booking of bob's
// that ends on Friday has not been missed yet (no no-show), and the minutes
// the agent delivered for the rest of the hour do not count.
func TestReportWeekInProgress(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := &reportFixture{t: t, db: db}
		f.node(2)
		alice, bob := f.user("alice"), f.user("bob")
		f.book(alice, models.StatusConfirmed, local(32, 11, 0), local(32, 14, 0), 0)
		f.use(0, local(32, 11, 0), local(32, 12, 5), 50, "alice", alice, 1000) // five minutes past "now"
		f.book(bob, models.StatusConfirmed, local(32, 10, 0), local(34, 18, 0), 1)
		w, err := models.ParseWeek("2026-W49", berlin)
		if err != nil {
			t.Fatal(err)
		}
		d, err := db.ReportWeek(context.Background(), w, local(32, 12, 0), models.DefaultReportRules)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.WeekFigures(alice); got.BusyMin != 60 || got.BookedSec != 3600 {
			t.Errorf("alice %+v, want 1 h booked and busy so far", got)
		}
		if got := d.WeekFigures(bob); got.NoShows != 0 || got.BookedSec != 2*3600 {
			t.Errorf("bob %+v, want 2 h booked so far and no no-show", got)
		}
	})
}

// TestReportPendingAsOfWeekEnd: "pending priority requests" counts the
// requests still undecided when the week ended, whatever happened since —
// so a later recompute shows what the sent report showed.
func TestReportPendingAsOfWeekEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ids := syntheticWeek(t, db)
		w, err := models.ParseWeek("2026-W49", time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		add := func(made time.Time, status, decidedCol string, decided time.Time) {
			t.Helper()
			sql := `INSERT INTO priority_requests (user_id, node_id, gpu_ids, starts_at, ends_at, purpose, urgency, plan, give_back, status, created_at, updated_at` +
				decidedCol + `) VALUES (?, (SELECT MIN(id) FROM nodes), '[]', ?, ?, 'p', 'u', 'p', 'g', ?, ?, ?`
			args := []any{ids.carol, made.Add(time.Hour), made.Add(2 * time.Hour), status, made, decided}
			if decidedCol != "" {
				sql += ", ?"
				args = append(args, decided)
			}
			if err := db.Gorm.Exec(sql+")", args...).Error; err != nil {
				t.Fatal(err)
			}
		}
		// Made in the week, approved after it: pending when it ended.
		add(w.End.Add(-30*time.Hour), models.RequestApproved, ", decided_at", w.End.Add(40*time.Hour))
		// Made in the week, withdrawn in it: not pending.
		add(w.End.Add(-50*time.Hour), models.RequestWithdrawn, "", w.End.Add(-49*time.Hour))
		// Made after the week: not the week's, though pending now.
		add(w.End.Add(2*time.Hour), models.RequestPending, "", w.End.Add(2*time.Hour))
		add(w.End.Add(3*time.Hour), models.RequestPending, "", w.End.Add(3*time.Hour))
		d := reportWeek(t, db, "2026-W49")
		// The fixture's Thursday request (still pending) and the one approved later.
		if got := d.ClusterSummary().PendingRequests; got != 2 {
			t.Errorf("pending requests as the week ended = %d, want 2", got)
		}
	})
}
