package models

import (
	"math"
	"testing"
	"time"
)

func TestEntitledShares(t *testing.T) {
	users := []User{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5}}
	// Teams 10 {1, 2} and 11 {2, 3}; users 4 and 5 in no team.
	ms := []Membership{{TeamID: 10, UserID: 1}, {TeamID: 10, UserID: 2}, {TeamID: 11, UserID: 2}, {TeamID: 11, UserID: 3}}
	all := map[int64]bool{1: true, 2: true, 3: true, 4: true, 5: true}
	tests := []struct {
		name    string
		users   []User
		ms      []Membership
		weights map[int64]float64
		active  map[int64]bool
		want    map[int64]float64
	}{
		{"no teams: one part for all", users, nil, nil, all, map[int64]float64{1: 0.2, 2: 0.2, 3: 0.2, 4: 0.2, 5: 0.2}},
		// Three parts of 1/3: team 10, team 11, the teamless part.
		{"equal weights", users, ms, nil, all, map[int64]float64{1: 1.0 / 6, 2: 1.0 / 3, 3: 1.0 / 6, 4: 1.0 / 6, 5: 1.0 / 6}},
		// Weights 3 and 1 plus the teamless 1: 3/5, 1/5, 1/5.
		{"weights", users, ms, map[int64]float64{10: 3, 11: 1}, all,
			map[int64]float64{1: 0.3, 2: 0.3 + 0.1, 3: 0.1, 4: 0.1, 5: 0.1}},
		// Only 1 and 4 active: team 10's third goes to 1, the teamless third
		// to 4; team 11 has no active member and splits among all of its.
		{"active members only", users, ms, nil, map[int64]bool{1: true, 4: true},
			map[int64]float64{1: 1.0 / 3, 2: 1.0 / 6, 3: 1.0 / 6, 4: 1.0 / 3, 5: 0}},
		// A lone teamless user next to four teams gets one fifth, not half.
		{"lone teamless user", []User{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 9}},
			[]Membership{{TeamID: 10, UserID: 1}, {TeamID: 11, UserID: 2}, {TeamID: 12, UserID: 3}, {TeamID: 13, UserID: 4}}, nil, nil,
			map[int64]float64{1: 0.2, 2: 0.2, 3: 0.2, 4: 0.2, 9: 0.2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EntitledShares(tt.users, tt.ms, tt.weights, tt.active)
			sum := 0.0
			for _, u := range tt.users {
				if math.Abs(got[u.ID]-tt.want[u.ID]) > 1e-12 {
					t.Errorf("user %d: got %v, want %v", u.ID, got[u.ID], tt.want[u.ID])
				}
				sum += got[u.ID]
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("shares sum to %v", sum)
			}
		})
	}
}

// TestUnbookedUseIsWorse is the "Done means": a user who books
// nothing and uses GPUs has a worse fair-share factor than one who booked
// the same hours and used them, at the default rules (and at any weight
// above 1); at weight 1 the two are equal, and neither ever gets F = 1.
// Both users are entitled to half; the week is one span.
func TestUnbookedUseIsWorse(t *testing.T) {
	w := Week{Start: time.Date(2026, 10, 19, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 10, 26, 0, 0, 0, 0, time.UTC)}
	spans := []Span{{Start: w.Start, End: w.End}}
	for _, tt := range []struct {
		name  string
		rules ReportRules
		hours float64
		want  int // the unbooked user's F against the booker's: -1 worse, 0 equal
	}{
		{"default rules, 5.5 h", DefaultReportRules, 5.5, -1},
		{"default rules, one minute", DefaultReportRules, 1.0 / 60, -1},
		{"default rules, the whole week", DefaultReportRules, 168, -1},
		{"unset weight falls back to the default", ReportRules{}, 5.5, -1},
		{"weight 2", ReportRules{UnbookedWeight: 2}, 5.5, -1},
		{"weight 1: equal", ReportRules{UnbookedWeight: 1}, 5.5, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			min := int64(math.Round(tt.hours * 60))
			booker := []Figures{{BookedSec: min * 60, BusyMin: min}}
			squatter := []Figures{{UnbookedMin: min}}
			weight := tt.rules.OrDefault().UnbookedWeight
			ub, us := DecayedUsage(spans, booker, w.End, tt.rules), DecayedUsage(spans, squatter, w.End, tt.rules)
			fb, fs := FairShareFactor(ub/(ub+us), 0.5), FairShareFactor(us/(ub+us), 0.5)
			got := 0
			if fs < fb {
				got = -1
			} else if fs > fb {
				got = 1
			}
			if got != tt.want || fs == 1 {
				t.Errorf("weight %v: booker F %v, unbooked user F %v", weight, fb, fs)
			}
		})
	}
}

func TestQuietHours(t *testing.T) {
	loc := time.UTC
	w := WeekOf(time.Date(2026, 10, 14, 0, 0, 0, 0, loc), loc) // 2026-W42; the coming week starts Mon 19 Oct
	next := w.Next().Start
	at := func(day, hour int) time.Time { return next.Add(time.Duration(24*day+hour) * time.Hour) }
	d := &WeekData{Week: w, GPUCount: 2,
		// GPU 1 booked all week but Tue 02:00–06:00; GPU 2 booked Tue 03:00–05:00.
		Coming: []Span{{next, at(1, 2)}, {at(1, 6), w.Next().End}, {at(1, 3), at(1, 5)}}}
	var heat HeatMap
	heat.Load[1][2] = 0.25 // Tuesday 02:00 was half a GPU busy on average
	got := d.QuietHours(heat, 3)
	want := []QuietSlot{
		{at(1, 5), at(1, 6), 2},   // both free
		{at(0, 0), at(1, 2), 1},   // one free, Monday 00:00 to Tuesday 02:00: one range
		{at(1, 2), at(1, 3), 1.5}, // Tuesday 02:00: 2 − max(0, 0.5)
	}
	want[1], want[2] = want[2], want[1] // ranked by free GPUs: 2, 1.5, 1
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if !got[i].Start.Equal(want[i].Start) || !got[i].End.Equal(want[i].End) || got[i].FreeGPUs != want[i].FreeGPUs {
			t.Errorf("slot %d: got %v–%v %v, want %v–%v %v", i, got[i].Start, got[i].End, got[i].FreeGPUs, want[i].Start, want[i].End, want[i].FreeGPUs)
		}
	}
	// An empty cluster is one range for the whole week, not "Mon 00:00".
	empty := (&WeekData{Week: w, GPUCount: 4}).QuietHours(HeatMap{}, 3)
	if len(empty) != 1 || !empty[0].Start.Equal(next) || !empty[0].End.Equal(w.Next().End) || empty[0].FreeGPUs != 4 {
		t.Errorf("empty cluster: %v", empty)
	}
	if got := (&WeekData{Week: w}).QuietHours(heat, 3); got != nil {
		t.Errorf("no GPUs: %v, want none", got)
	}
}
