package models

import (
	"reflect"
	"testing"
	"time"
)

func TestUsageReadPlanWithout(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 3, 2, h, m, 0, 0, time.UTC) }
	hour := func(h int) int64 { return UnixHour(at(h, 0)) }
	plan := UsageReadPlan{Hours: []HourRange{{hour(1), hour(9)}}, Minutes: []Span{{at(0, 30), at(1, 0)}, {at(9, 0), at(10, 15)}}}
	for _, tc := range []struct {
		name string
		skip []Span
		want UsageReadPlan
	}{
		{"nothing skipped", nil, plan},
		{"empty span", []Span{{at(3, 0), at(3, 0)}}, plan},
		{"whole hours in the middle", []Span{{at(3, 0), at(5, 0)}},
			UsageReadPlan{Hours: []HourRange{{hour(1), hour(3)}, {hour(5), hour(9)}}, Minutes: plan.Minutes}},
		{"off the hour: the cut hours' minutes stay", []Span{{at(0, 45), at(2, 30)}},
			UsageReadPlan{Hours: []HourRange{{hour(2), hour(9)}}, Minutes: []Span{{at(0, 30), at(0, 45)}, {at(9, 0), at(10, 15)}}}},
		{"the end, minutes and hours", []Span{{at(8, 0), at(10, 0)}},
			UsageReadPlan{Hours: []HourRange{{hour(1), hour(8)}}, Minutes: []Span{{at(0, 30), at(1, 0)}, {at(10, 0), at(10, 15)}}}},
		{"everything", []Span{{at(0, 0), at(11, 0)}}, UsageReadPlan{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := plan.Without(tc.skip); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Without(%v) =\n %+v\nwant\n %+v", tc.skip, got, tc.want)
			}
		})
	}
}

func TestFillTrendWeek(t *testing.T) {
	w, _ := ParseWeek("2026-W10", time.UTC)
	prev := w.Prev(1)
	spans := SkipSpans(ReportSpans(w, w.End), map[int]*WeekData{TrendSpan(1): nil})
	if spans[TrendSpan(1)].Start != spans[TrendSpan(1)].End || spans[TrendSpan(2)].Start == spans[TrendSpan(2)].End {
		t.Fatalf("SkipSpans emptied the wrong spans: %v", spans)
	}
	d := &WeekData{Week: w, Spans: ReportSpans(w, w.End), ByUser: map[int64][]Figures{7: make([]Figures, 10)},
		ClusterBusyMin: make([]int64, 10), ClusterUnbookedMin: make([]int64, 10), HourBusyMin: map[int64]int64{UnixHour(w.Start): 5}}
	d.ByUser[7][0].BusyMin = 3
	f := &WeekData{Week: prev, Spans: ReportSpans(prev, prev.End), ByUser: map[int64][]Figures{7: make([]Figures, 10), 8: make([]Figures, 10), 9: make([]Figures, 10)},
		ClusterBusyMin: []int64{1, 2, 3, 4, 5, 6, 7, 100, 100, 100}, ClusterUnbookedMin: []int64{0, 0, 0, 0, 0, 0, 9, 50, 50, 50},
		HourBusyMin: map[int64]int64{UnixHour(prev.Start): 11, UnixHour(prev.End) - 1: 12, UnixHour(prev.Start) - 1: 13}}
	f.ByUser[7][1] = Figures{BookedSec: 3600, BusyMin: 40}
	f.ByUser[7][6] = Figures{BookedSec: 7200, NoShows: 1}
	f.ByUser[7][TrendSpan(1)] = Figures{BookedSec: 99} // the week before prev: not prev's figure
	f.ByUser[8][2] = Figures{UnbookedMin: 30}
	d.FillTrendWeek(TrendSpan(1), f)
	if got, want := d.ByUser[7][TrendSpan(1)], (Figures{BookedSec: 10800, BusyMin: 40, NoShows: 1}); got != want {
		t.Errorf("user 7: %+v, want %+v", got, want)
	}
	if got := d.ByUser[7][0].BusyMin; got != 3 {
		t.Errorf("user 7's Monday: %d busy minutes, want 3 (untouched)", got)
	}
	if got, want := d.ByUser[8][TrendSpan(1)], (Figures{UnbookedMin: 30}); got != want {
		t.Errorf("user 8: %+v, want %+v", got, want)
	}
	if _, ok := d.ByUser[9]; ok {
		t.Error("user 9, idle all week, was added")
	}
	if d.ClusterBusyMin[TrendSpan(1)] != 28 || d.ClusterUnbookedMin[TrendSpan(1)] != 9 {
		t.Errorf("cluster: busy %d, unbooked %d; want 28, 9", d.ClusterBusyMin[TrendSpan(1)], d.ClusterUnbookedMin[TrendSpan(1)])
	}
	want := map[int64]int64{UnixHour(w.Start): 5, UnixHour(prev.Start): 11, UnixHour(prev.End) - 1: 12}
	if !reflect.DeepEqual(d.HourBusyMin, want) {
		t.Errorf("heat map hours %v, want %v", d.HourBusyMin, want)
	}
}
