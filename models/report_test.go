package models

import (
	"math"
	"testing"
	"time"
)

var berlin, _ = time.LoadLocation("Europe/Berlin")

func TestParseWeek(t *testing.T) {
	tests := []struct {
		in         string
		start, end time.Time
		hours      float64
	}{
		{"2026-W49", time.Date(2026, 11, 30, 0, 0, 0, 0, berlin), time.Date(2026, 12, 7, 0, 0, 0, 0, berlin), 168},
		{"2026-W43", time.Date(2026, 10, 19, 0, 0, 0, 0, berlin), time.Date(2026, 10, 26, 0, 0, 0, 0, berlin), 169}, // clocks go back
		{"2026-W13", time.Date(2026, 3, 23, 0, 0, 0, 0, berlin), time.Date(2026, 3, 30, 0, 0, 0, 0, berlin), 167},   // clocks go forward
		{"2026-w01", time.Date(2025, 12, 29, 0, 0, 0, 0, berlin), time.Date(2026, 1, 5, 0, 0, 0, 0, berlin), 168},   // ISO year starts in December
		{"2020-W53", time.Date(2020, 12, 28, 0, 0, 0, 0, berlin), time.Date(2021, 1, 4, 0, 0, 0, 0, berlin), 168},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			w, err := ParseWeek(tt.in, berlin)
			if err != nil {
				t.Fatal(err)
			}
			if !w.Start.Equal(tt.start) || !w.End.Equal(tt.end) || w.End.Sub(w.Start).Hours() != tt.hours {
				t.Errorf("got %v – %v (%v h), want %v – %v (%v h)", w.Start, w.End, w.End.Sub(w.Start).Hours(), tt.start, tt.end, tt.hours)
			}
			if got := WeekOf(w.Start.Add(100*time.Hour), berlin).String(); got != w.String() {
				t.Errorf("WeekOf inside the week = %s, want %s", got, w)
			}
		})
	}
	for _, bad := range []string{"", "2026-49", "2026-W00", "2026-W54", "2025-W53", "26-W01", "2026-Wxx"} {
		if _, err := ParseWeek(bad, berlin); ErrorCode(err) != EINVALID {
			t.Errorf("ParseWeek(%q) = %v, want EINVALID", bad, err)
		}
	}
}

func TestWeekPrevNextDays(t *testing.T) {
	w, _ := ParseWeek("2026-W44", berlin)
	if p := w.Prev(1); p.String() != "2026-W43" || p.End != w.Start {
		t.Errorf("Prev = %s ending %v", p, p.End)
	}
	if n := w.Prev(1).Next(); n.String() != "2026-W44" {
		t.Errorf("Next = %s", n)
	}
	w43, _ := ParseWeek("2026-W43", berlin)
	days := w43.Days()
	if got := days[6].End.Sub(days[6].Start); got != 25*time.Hour {
		t.Errorf("Sunday 25 Oct lasts %v, want 25h", got)
	}
}

func TestSchedule(t *testing.T) {
	s, err := ParseSchedule("Mon 08:00")
	if err != nil || s != DefaultReportRules.Schedule || s.String() != "mon 08:00" {
		t.Fatalf("ParseSchedule = %+v, %v", s, err)
	}
	for _, bad := range []string{"", "monday", "mon 8", "xyz 08:00", "mon 24:00", "mon 08:60"} {
		if _, err := ParseSchedule(bad); err == nil {
			t.Errorf("ParseSchedule(%q) accepted", bad)
		}
	}
	tests := []struct {
		now  time.Time
		want string
	}{
		{time.Date(2026, 12, 7, 7, 59, 0, 0, berlin), "2026-W48"}, // before Monday 08:00: W49 is not due yet
		{time.Date(2026, 12, 7, 8, 0, 0, 0, berlin), "2026-W49"},
		{time.Date(2026, 12, 10, 15, 0, 0, 0, berlin), "2026-W49"}, // Thursday: the catch-up of a missed Monday
		{time.Date(2026, 12, 13, 23, 0, 0, 0, berlin), "2026-W49"},
	}
	for _, tt := range tests {
		if got := s.DueWeek(tt.now, berlin).String(); got != tt.want {
			t.Errorf("DueWeek(%v) = %s, want %s", tt.now, got, tt.want)
		}
	}
}

func TestFiguresArithmetic(t *testing.T) {
	f := Figures{BookedSec: 4 * 3600, BusyMin: 90}
	if f.BookedHours() != 4 || f.BusyHours() != 1.5 || f.IdleHours() != 2.5 || f.Efficiency() != 1.5/4 {
		t.Errorf("got booked %v busy %v idle %v eff %v", f.BookedHours(), f.BusyHours(), f.IdleHours(), f.Efficiency())
	}
	// A minute released mid-way counts whole: busy never passes booked.
	g := Figures{BookedSec: 1800 + 30, BusyMin: 31}
	if g.Efficiency() != 1 || g.IdleHours() != 0 {
		t.Errorf("capped: eff %v idle %v", g.Efficiency(), g.IdleHours())
	}
	if (Figures{}).HasEfficiency() || (Figures{}).Active() {
		t.Error("empty figures: efficiency must be n/a and the user inactive")
	}
	// Held idle is part of idle, never more.
	h := Figures{BookedSec: 2 * 3600, BusyMin: 60, HeldIdleMin: 90}
	if h.IdleHours() != 1 || h.HeldIdleHours() != 1 || h.Efficiency() != 0.5 {
		t.Errorf("held idle %v of idle %v, efficiency %v", h.HeldIdleHours(), h.IdleHours(), h.Efficiency())
	}
}

func TestFairShareFactor(t *testing.T) {
	tests := []struct{ u, s, want float64 }{
		{0, 0.25, 1}, {0.25, 0.25, 0.5}, {0.5, 0.25, 0.25}, {0.1, 0, 0}, {0, 0, 1},
	}
	for _, tt := range tests {
		if got := FairShareFactor(tt.u, tt.s); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("F(%v, %v) = %v, want %v", tt.u, tt.s, got, tt.want)
		}
	}
	// A week-old hour counts half.
	if got := decayWeight(UsageHalfLife); got != 0.5 {
		t.Errorf("decay after one half-life = %v", got)
	}
}

func TestRank(t *testing.T) {
	v := map[int64]float64{1: 5, 2: 9, 3: 5, 4: 0}
	got := Rank([]int64{1, 2, 3, 4}, func(id int64) float64 { return v[id] })
	want := map[int64]int{2: 1, 1: 2, 3: 2, 4: 4}
	for id, r := range want {
		if got[id] != r {
			t.Errorf("rank of %d = %d, want %d", id, got[id], r)
		}
	}
}
