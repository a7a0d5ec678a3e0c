package models

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// chargeShape is one way of doing a piece of GPU work, as a user's figures.
type chargeShape struct {
	name string
	figs Figures
}

// figs is a user's figures from booked, busy and unbooked GPU-minutes.
func figs(booked, busy, unbooked int64) Figures {
	return Figures{BookedSec: booked * 60, BusyMin: busy, UnbookedMin: unbooked}
}

// sameWork is the four ways of doing work GPU-minutes, best first:
// booking exactly that; using it without a booking; booking generously
// (margin times the work more, margin ≥ 1: at most half of it used) and
// leaving the rest idle; and booking as generously, never showing up
// (busy under the no-show share) and doing the work on a card nobody had
// booked meanwhile.
func sameWork(work, margin int64, r ReportRules) []chargeShape {
	booked := work * (1 + margin)
	return []chargeShape{
		{"exact booking", figs(work, work, 0)},
		{"unbooked use", figs(0, 0, work)},
		{"idle booking", figs(booked, work, 0)},
		{"no-show", figs(booked, noShowBusy(booked, r), work)},
	}
}

// sameHours is the example: the same GPU-hours taken from the
// cluster (held by a booking or used without one), best first: a booking
// used all through; the hours used without a booking; a booking busy for
// a share of its time at or above the no-show share and under
// (IdleWeight − UnbookedWeight) ÷ (IdleWeight − 1) (a half at the
// defaults); a no-show.
func sameHours(hours int64, busyPct float64, r ReportRules) []chargeShape {
	busy := int64(float64(hours) * busyPct / 100)
	return []chargeShape{
		{"exact booking", figs(hours, hours, 0)},
		{"unbooked use", figs(0, 0, hours)},
		{"idle booking", figs(hours, busy, 0)},
		{"no-show", figs(hours, noShowBusy(hours, r), 0)},
	}
}

// noShowBusy is the most busy minutes a booking of booked minutes can have
// and still be a no-show.
func noShowBusy(booked int64, r ReportRules) int64 {
	busy := int64(0)
	for r.IsNoShow(busy+1, booked*60) {
		busy++
	}
	return busy
}

// chargeRules are the rule sets the order must hold under: the defaults,
// an unset config, and weights set otherwise. sameHours needs an idle
// weight above the unbooked weight (at equal weights a no-show costs what
// the same hours unbooked cost), so it is not run at equal weights.
var chargeRules = []struct {
	name       string
	rules      ReportRules
	sameWeight bool
}{
	{"defaults", DefaultReportRules, false},
	{"unset", ReportRules{}, false},
	{"unbooked 1.1, idle default", ReportRules{UnbookedWeight: 1.1}, false},
	{"unbooked 1.2, idle 5", ReportRules{UnbookedWeight: 1.2, IdleWeight: 5}, false},
	{"unbooked 3, idle unset (3)", ReportRules{UnbookedWeight: 3}, true},
	{"idle = unbooked = 1.5", ReportRules{UnbookedWeight: 1.5, IdleWeight: 1.5}, true},
	{"no-show under 25 %", ReportRules{NoShowPct: 25}, false},
}

// TestChargeOrder is the "Done means": for the same GPU work the
// fair-share factor orders exact booking < unbooked use < idle booking <
// no-show, over many sizes of work, margins, busy shares, days of the
// report's span (the decay) and rule sets, each user next to a heavy and a
// light user of the same team, through the whole report (WeekData →
// UserReport → FairShare), and the charged hours order the same way.
func TestChargeOrder(t *testing.T) {
	works := []int64{1, 30, 60, 600, 2400, 6000} // GPU-minutes: a minute to 100 h
	for _, rs := range chargeRules {
		r := rs.rules.OrDefault()
		for _, work := range works {
			for _, margin := range []int64{1, 2, 9} {
				name := fmt.Sprintf("%s/work %d min/booked %dx", rs.name, work, margin+1)
				checkOrder(t, name, sameWork(work, margin, r), rs.rules)
			}
			if rs.sameWeight {
				continue
			}
			limit := (r.IdleWeight - r.UnbookedWeight) / (r.IdleWeight - 1) * 100
			for _, pct := range []float64{r.NoShowPct, (r.NoShowPct + limit) / 2, limit - 1} {
				if work < 100 || pct >= limit || pct < r.NoShowPct {
					continue // too short to be busy for a share, or no share fits
				}
				name := fmt.Sprintf("%s/%d min held/busy %.0f%%", rs.name, work, pct)
				checkOrder(t, name, sameHours(work, pct, r), rs.rules)
			}
		}
	}
}

// checkOrder checks that each shape is charged strictly more than the one
// before it, alone and as a fair-share factor in a week, on each of the
// spans Monday, Sunday and the week before.
func checkOrder(t *testing.T, name string, shapes []chargeShape, rules ReportRules) {
	t.Helper()
	for i := 1; i < len(shapes); i++ {
		if a, b := shapes[i-1].figs.ChargedHours(rules), shapes[i].figs.ChargedHours(rules); !(a < b) {
			t.Errorf("%s: %s is charged %.4f h, %s %.4f h: want less", name, shapes[i-1].name, a, shapes[i].name, b)
		}
	}
	w := WeekOf(time.Date(2026, 10, 21, 12, 0, 0, 0, time.UTC), time.UTC)
	for _, span := range []int{0, 6, TrendSpan(1)} {
		d := chargeWeek(w, span, shapes, rules)
		for i := 1; i < len(shapes); i++ {
			a, b := d.UserReport(User{ID: int64(i)}), d.UserReport(User{ID: int64(i + 1)})
			if !(a.FairShare > b.FairShare) || a.Entitled != b.Entitled {
				t.Errorf("%s, span %d: F(%s) = %.6f, F(%s) = %.6f (S %.3f, %.3f): want the first higher", name, span,
					shapes[i-1].name, a.FairShare, shapes[i].name, b.FairShare, a.Entitled, b.Entitled)
			}
		}
	}
}

// chargeWeek is a week in which users 1… do the shapes, in span, beside a
// heavy user (100) and a light one (101), all in one team.
func chargeWeek(w Week, span int, shapes []chargeShape, rules ReportRules) *WeekData {
	d := &WeekData{Week: w, AsOf: w.End, Spans: ReportSpans(w, w.End), ByUser: map[int64][]Figures{}, Rules: rules}
	put := func(id int64, f Figures) {
		figs := make([]Figures, len(d.Spans))
		figs[span] = f
		d.ByUser[id] = figs
		d.Users = append(d.Users, User{ID: id})
		d.Memberships = append(d.Memberships, Membership{TeamID: 1, UserID: id, TeamName: "t"})
	}
	for i, s := range shapes {
		put(int64(i+1), s.figs)
	}
	put(100, figs(6000, 5000, 600))
	put(101, figs(60, 30, 0))
	return d
}

// TestIsNoShow: a booking is a no-show when its booker was busy for under
// the no-show share of its GPU-time, not when not one minute was busy.
func TestIsNoShow(t *testing.T) {
	for _, tt := range []struct {
		name            string
		rules           ReportRules
		busy, bookedMin int64
		want            bool
	}{
		{"never busy", DefaultReportRules, 0, 600, true},
		{"one busy minute of 10 h", DefaultReportRules, 1, 600, true},
		{"59 of 600 minutes (9.8 %)", DefaultReportRules, 59, 600, true},
		{"60 of 600 minutes: 10 % is not under 10 %", DefaultReportRules, 60, 600, false},
		{"all of it", DefaultReportRules, 600, 600, false},
		{"two GPUs, one of them all through (50 %)", DefaultReportRules, 600, 1200, false},
		{"nothing booked", DefaultReportRules, 0, 0, false},
		{"unset rules read the default", ReportRules{}, 59, 600, true},
		{"under 25 %", ReportRules{NoShowPct: 25}, 149, 600, true},
		{"25 % at 25 %", ReportRules{NoShowPct: 25}, 150, 600, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rules.IsNoShow(tt.busy, tt.bookedMin*60); got != tt.want {
				t.Errorf("IsNoShow(%d, %d min) = %v, want %v", tt.busy, tt.bookedMin, got, tt.want)
			}
		})
	}
}

// TestChargeDefaults: the idle weight is never below the unbooked weight
// unless set so, the late-cancel lead is 2 h unless set or turned off, and
// a snapshot frozen before the idle weight existed reads 1, what its
// factor was computed with.
func TestChargeDefaults(t *testing.T) {
	for _, tt := range []struct {
		name      string
		rules     ReportRules
		idle, pct float64
		lead      time.Duration
	}{
		{"unset", ReportRules{}, 2, 10, 2 * time.Hour},
		{"unbooked weight 3 lifts the idle weight", ReportRules{UnbookedWeight: 3}, 3, 10, 2 * time.Hour},
		{"set", ReportRules{IdleWeight: 4, NoShowPct: 20, LateCancel: 30 * time.Minute}, 4, 20, 30 * time.Minute},
		{"late cancellations off", ReportRules{LateCancel: -1}, 2, 10, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.rules.OrDefault()
			if r.IdleWeight != tt.idle || r.NoShowPct != tt.pct || tt.rules.LateCancelLead() != tt.lead {
				t.Errorf("got idle %v, no-show %v %%, lead %v; want %v, %v, %v", r.IdleWeight, r.NoShowPct, tt.rules.LateCancelLead(), tt.idle, tt.pct, tt.lead)
			}
		})
	}
	var old ReportRules
	if err := json.Unmarshal([]byte(`{"BusyUtilPct":5,"UnbookedWeight":1.5}`), &old); err != nil || old.OrDefault().IdleWeight != LegacyIdleWeight {
		t.Errorf("a snapshot without an idle weight: %+v, %v; want idle weight 1", old, err)
	}
	b, _ := json.Marshal(DefaultReportRules)
	var back ReportRules
	if err := json.Unmarshal(b, &back); err != nil || back != DefaultReportRules {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	// At weight 1 every booked hour costs 1: the charge before the idle weight.
	f := Figures{BookedSec: 4 * 3600, BusyMin: 120, UnbookedMin: 60}
	if got := f.ChargedHours(ReportRules{UnbookedWeight: 1.5, IdleWeight: LegacyIdleWeight}); got != 4+1.5 {
		t.Errorf("legacy charge %v, want 5.5", got)
	}
	// 2 h busy + 2 × (2 h idle + 1.5 h cancelled late) + 1.5 × 1 h unbooked.
	f.LateCancelSec = 5400
	if got := f.ChargedHours(DefaultReportRules); got != 2+2*3.5+1.5 {
		t.Errorf("charge %v, want 10.5", got)
	}
}
