package store_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/storetest/fairweek"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

func fairReport(t *testing.T, db *store.DB, week string, rules models.ReportRules) *models.WeekData {
	t.Helper()
	w, err := models.ParseWeek(week, berlin)
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.ReportWeek(context.Background(), w, w.End, rules)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestReportFairnessWeek checks every figure of the fairness fixture
// (models/store/storetest/fairweek) on both databases, in the DST week and
// a normal one: the store's numbers, and the tables every surface prints
// from them (the web, cmd and reports tests check those surfaces).
func TestReportFairnessWeek(t *testing.T) {
	t.Parallel()
	for _, fw := range fairweek.Weeks {
		t.Run(fw.Week, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				id := fairweek.Build(t, db, fw.Parse())
				d := fairReport(t, db, fw.Week, models.DefaultReportRules)
				for uid, want := range fairweek.Figures(id, fw.DST) {
					if got := d.WeekFigures(uid); got != want {
						t.Errorf("user %d: got %+v, want %+v", uid, got, want)
					}
				}
				checkFairDays(t, d, id, fw.DST)
				checkFairCluster(t, d, fw.DST)
				checkFairShares(t, d, id, fw.DST)
				checkFairTables(t, d, fairweek.Expect(fw, models.DefaultReportRules.UnbookedWeight))
			})
		})
	}
}

// checkFairTables: the tables of the week as the views lay them out.
func checkFairTables(t *testing.T, d *models.WeekData, want fairweek.Expected) {
	t.Helper()
	tr := i18n.MustLoad().For("en")
	table := func(tb views.Table) fairweek.Table { return fairweek.Table{Head: tb.Head, Rows: tb.Rows} }
	for _, u := range d.Users {
		r := d.UserReport(u)
		fairweek.Check(t, u.Name+" figures", table(views.FiguresTable(tr, r)), want.Figures[u.Name])
		fairweek.Check(t, u.Name+" days", table(views.DaysTable(tr, r.Days)), want.Days[u.Name])
		fairweek.Check(t, u.Name+" trend", table(views.TrendTable(tr, r.Trend)), want.Trend[u.Name])
	}
	fairweek.Check(t, "cluster", table(views.ClusterTable(tr, d.ClusterSummary())), want.Cluster)
	fairweek.Check(t, "users", table(views.MembersTable(tr, "users", d.ClusterUsers())), want.Users)
}

func checkFairDays(t *testing.T, d *models.WeekData, id fairweek.IDs, dst bool) {
	t.Helper()
	sun := int64(6)
	if dst {
		sun = 7
	}
	fay := d.DaysOf(id.Fay)
	if fay[5].Figures.BookedSec != 2*3600 || fay[5].Figures.BusyMin != 120 || fay[6].Figures.BookedSec != sun*3600 || fay[6].Figures.BusyMin != sun*60 {
		t.Errorf("fay Sat %+v Sun %+v, want 2 h and %d h", fay[5].Figures, fay[6].Figures, sun)
	}
	if got := d.UsedBy[id.Cat]; len(got) != 1 || got[0].UserID != id.Dan || got[0].Name != "dan" || got[0].Minutes != 60 {
		t.Errorf("used by on cat's bookings: %+v, want dan 60 min", got)
	}
	if got := d.UsedBy[id.Ann]; len(got) != 0 {
		t.Errorf("used by on ann's bookings: %+v, want nobody", got)
	}
	// ann's booking across the week's end: the next week has its last 2 h and its verdict.
	next := d.Week.Next()
	if len(d.Coming) != 1 || !d.Coming[0].Start.Equal(next.Start.Add(-2*time.Hour)) || !d.Coming[0].End.Equal(next.Start.Add(2*time.Hour)) {
		t.Errorf("coming bookings %+v, want ann's g2 Sun 22:00–Mon 02:00", d.Coming)
	}
}

func checkFairCluster(t *testing.T, d *models.WeekData, dst bool) {
	t.Helper()
	s := d.ClusterSummary()
	night, hours := 8.0, 168.0
	if dst {
		night, hours = 9, 169
	}
	// Booked 9 + 5 + 4 + night + eve's 12; busy in bookings 420 + 120 + 0
	// + 60·night + eve's 50 + 12.
	if s.Booked.BookedHours() != 30+night || s.Booked.BusyMin != int64(602+60*night) || s.CapacityHours != 6*hours {
		t.Errorf("cluster booked %v busy %d capacity %v", s.Booked.BookedHours(), s.Booked.BusyMin, s.CapacityHours)
	}
	// Unbooked: dan 60 + eve 180 + the shared half hour once = 270 min,
	// although the users' own figures add up to 300.
	if !near(s.UnbookedHours, 270.0/60) || s.Booked.UnbookedMin != 300 {
		t.Errorf("cluster unbooked %v h (users' sum %d min), want 4.5 h and 300", s.UnbookedHours, s.Booked.UnbookedMin)
	}
	// Busy anywhere: ann 360 + 60 at 6 %, ben 120 + 60 without per-user data, dan on
	// cat's booking 60, eve 180, dan and fay's shared 30, fay's night, eve's
	// 50 + 12 at the weekend; cat's 0 % is not busy.
	if want := (420 + 180 + 60 + 180 + 30 + 60*night + 62) / 60; !near(s.ClusterBusyHours, want) {
		t.Errorf("cluster busy %v, want %v", s.ClusterBusyHours, want)
	}
	// No-shows: ben's two, cat's two and eve's Saturday (busy 50 of 600
	// minutes, under 10 %); her Sunday (12 of 120, 10 %) is not one. dan
	// cancelled his Saturday booking at 09:00: 10–11 is charged, 1 h.
	if s.Booked.HeldIdleMin != 120 || s.Booked.NoShows != 5 || s.Booked.LateCancels != 1 || s.Booked.LateCancelSec != 3600 {
		t.Errorf("cluster held idle %d no-shows %d late cancels %d (%d s), want 120, 5, 1 (3600 s)", s.Booked.HeldIdleMin,
			s.Booked.NoShows, s.Booked.LateCancels, s.Booked.LateCancelSec)
	}
	// Quiet hours of the next week (6 GPUs): Mon 00–02 has ann's booking (5
	// free); 02–10 nothing booked or used (6 free); 10–12 held ann's use in
	// one of the four weeks, ¼ GPU on average (5.75 → 5.8); and so on.
	q := d.QuietHours(d.HeatMap(), 3)
	start := d.Week.Next().Start
	h := func(n int) time.Time { return start.Add(time.Duration(n) * time.Hour) }
	want := []models.QuietSlot{{Start: h(2), End: h(10), FreeGPUs: 6}, {Start: h(12), End: h(34), FreeGPUs: 6}, {Start: h(36), End: h(62), FreeGPUs: 6}}
	for i := range want {
		if i >= len(q) || !q[i].Start.Equal(want[i].Start) || !q[i].End.Equal(want[i].End) || q[i].FreeGPUs != want[i].FreeGPUs {
			t.Errorf("quiet slots %+v, want %+v", q, want)
			break
		}
	}
}

// checkFairShares: every user is active and the three parts (T1, T2, the
// teamless) weigh 1 each, so each of the six is entitled to 1/6. The
// charged hours per day (busy booked at 1, idle booked and cancelled late
// at the default idle weight I = 2, unbooked at the default weight W =
// 1.5) are decayed by 2^(−age/7 d), age from the middle of the day to the
// week's end.
func checkFairShares(t *testing.T, d *models.WeekData, id fairweek.IDs, dst bool) {
	t.Helper()
	end := d.Week.End
	age := func(day int) float64 {
		s := d.Week.Days()[day]
		mid := s.Start.Add(s.End.Sub(s.Start) / 2)
		return math.Exp2(-end.Sub(mid).Hours() / 24 / 7)
	}
	sun := 6.0
	if dst {
		sun = 7
	}
	const w, i = 1.5, 2.0
	charged := map[int64]float64{
		id.Ann: 3*age(0) + (2+i*2)*age(1) + 2*age(6), // Tuesday: 2 h busy, 2 h idle
		id.Ben: i*2*age(2) + 2*age(3) + i*1*age(4),   // the no-shows' hours are idle
		id.Cat: i*2*age(2) + i*2*age(3),
		id.Dan: w*(1*age(2)+0.5*age(4)) + i*1*age(5), // Saturday: 1 h cancelled late
		id.Eve: w*3*age(4) + (50.0/60+i*(10-50.0/60))*age(5) + (0.2+i*1.8)*age(6),
		id.Fay: w*0.5*age(4) + 2*age(5) + sun*age(6),
	}
	total := 0.0
	for _, c := range charged {
		total += c
	}
	for _, u := range d.Users {
		r := d.UserReport(u)
		u := charged[u.ID] / total
		if !near(r.Entitled, 1.0/6) || !near(r.UsageShare, u) || !near(r.FairShare, math.Exp2(-u*6)) {
			t.Errorf("%s: S %v U %v F %v, want 1/6, %v, %v", r.User.Name, r.Entitled, r.UsageShare, r.FairShare, u, math.Exp2(-u*6))
		}
		if r.User.ID == id.Eve && !(r.FairShare < 1) {
			t.Errorf("eve used 3 GPU-hours without booking and has F = %v", r.FairShare)
		}
	}
	ranks := map[int64][2]int{id.Ann: {1, 2}, id.Ben: {2, 2}, id.Cat: {1, 2}, id.Dan: {1, 2}, id.Eve: {0, 0}, id.Fay: {0, 0}}
	for _, u := range d.Users {
		r := d.UserReport(u)
		if got := [2]int{r.Rank, r.RankOf}; got != ranks[u.ID] {
			t.Errorf("%s: rank %v, want %v", u.Name, got, ranks[u.ID])
		}
	}
}

// TestReportTeamShareWeight: T1 at weight 2 takes 2/4 of the cluster, T2
// and the teamless part 1/4 each, split among their active members.
func TestReportTeamShareWeight(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		w := fairweek.Weeks[1].Parse()
		id := fairweek.Build(t, db, w)
		if err := db.SetTeamShareWeight(context.Background(), id.T1, 2, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		d := fairReport(t, db, "2026-W49", models.DefaultReportRules)
		want := map[int64]float64{id.Ann: 0.25, id.Ben: 0.25, id.Cat: 0.125, id.Dan: 0.125, id.Eve: 0.125, id.Fay: 0.125}
		for _, u := range d.Users {
			if got := d.UserReport(u).Entitled; !near(got, want[u.ID]) {
				t.Errorf("%s entitled %v, want %v", u.Name, got, want[u.ID])
			}
		}
		if err := db.SetTeamShareWeight(context.Background(), 999999, 2, models.CLIActor); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("unknown team: %v, want ENOTFOUND", err)
		}
	})
}

// TestReportUnbookedWeight: at weight 2 (and the idle weight 2) eve's 3
// unbooked GPU-hours count as 6 in her usage.
func TestReportUnbookedWeight(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		w := fairweek.Weeks[1].Parse()
		id := fairweek.Build(t, db, w)
		rules := models.DefaultReportRules
		rules.UnbookedWeight = 2
		d := fairReport(t, db, "2026-W49", rules)
		var eve, ann float64
		for _, u := range d.Users {
			switch u.ID {
			case id.Eve:
				eve = d.UserReport(u).UsageShare
			case id.Ann:
				ann = d.UserReport(u).UsageShare
			}
		}
		day := func(i int) float64 {
			s := w.Days()[i]
			return math.Exp2(-w.End.Sub(s.Start.Add(s.End.Sub(s.Start)/2)).Hours() / 24 / 7)
		}
		wantEve := 6*day(4) + (50.0/60+2*(10-50.0/60))*day(5) + (0.2+2*1.8)*day(6)
		wantAnn := 3*day(0) + (2+2*2)*day(1) + 2*day(6)
		if !near(eve/ann, wantEve/wantAnn) {
			t.Errorf("eve/ann usage %v, want %v", eve/ann, wantEve/wantAnn)
		}
	})
}
