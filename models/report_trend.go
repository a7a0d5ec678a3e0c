package models

// The trend of a report (the three weeks before its week) is made of
// closed weeks. Once such a week is frozen, its snapshot holds its figures
// as every surface has shown them since; the store reads the trend weeks
// from their snapshots and computes from the usage only the week itself
// and any trend week without a readable snapshot (docs/reports.md).

// TrendSpan is the index in ReportSpans of the week k weeks before the
// report's week (1 ≤ k < TrendWeeks).
func TrendSpan(k int) int { return ReportDays + k - 1 }

// SkipSpans returns spans with the spans at the indexes of skip emptied
// (cut to their start), so that the report's queries read nothing of them.
func SkipSpans[T any](spans []Span, skip map[int]T) []Span {
	out := append([]Span(nil), spans...)
	for i := range skip {
		out[i] = Span{Start: spans[i].Start, End: spans[i].Start}
	}
	return out
}

// TrendWeek is all that a report reads of a frozen trend week: every
// user's figures of the week, the cluster's busy and unbooked minutes and
// the busy minutes per UTC hour. The store keeps it per snapshot, decoded
// once: the whole snapshot is 2.4 MB of JSON at 512 GPUs, this ~100 kB.
// It is shared between reports and never changed.
type TrendWeek struct {
	Users       map[int64]Figures
	BusyMin     int64
	UnbookedMin int64
	HourBusyMin map[int64]int64
}

// TrendWeek is f's part that FillTrend reads (f a frozen week).
func (f *WeekData) TrendWeek() *TrendWeek {
	t := &TrendWeek{Users: map[int64]Figures{}, BusyMin: sumDays(f.ClusterBusyMin),
		UnbookedMin: sumDays(f.ClusterUnbookedMin), HourBusyMin: map[int64]int64{}}
	for uid := range f.ByUser {
		if week := f.WeekFigures(uid); week != (Figures{}) {
			t.Users[uid] = week
		}
	}
	for h, v := range f.HourBusyMin {
		t.HourBusyMin[h] = v
	}
	return t
}

// FillTrendWeek sets span i of d, a trend week that the report's queries
// skipped (SkipSpans), from f, that week's frozen snapshot (FillTrend).
func (d *WeekData) FillTrendWeek(i int, f *WeekData) { d.FillTrend(i, f.TrendWeek()) }

// FillTrend sets span i of d from t: every user's figures of the week,
// the cluster's busy and unbooked minutes, and the heat map's hours that
// begin inside the span.
func (d *WeekData) FillTrend(i int, t *TrendWeek) {
	for uid, week := range t.Users {
		figs, ok := d.ByUser[uid]
		if !ok {
			figs = make([]Figures, len(d.Spans))
			d.ByUser[uid] = figs
		}
		figs[i] = week
	}
	d.ClusterBusyMin[i] = t.BusyMin
	d.ClusterUnbookedMin[i] = t.UnbookedMin
	s := d.Spans[i]
	for h, v := range t.HourBusyMin {
		if hs := HourStart(h); !hs.Before(s.Start) && hs.Before(s.End) {
			d.HourBusyMin[h] = v
		}
	}
}

// sumDays is the sum of the week's days of per-span values.
func sumDays(xs []int64) int64 {
	var n int64
	for i := 0; i < ReportDays && i < len(xs); i++ {
		n += xs[i]
	}
	return n
}

// Without is p less everything inside spans (trend weeks read from their
// snapshots): their minutes are not read, nor their rolled hours. A
// span's first and last hour stay when the span does not begin or end on
// the hour: PlanUsageRead reads such hours from their minutes, and the
// minute ranges are cut at the span's exact bounds.
func (p UsageReadPlan) Without(spans []Span) UsageReadPlan {
	var cutHours []HourRange
	cutMinutes := p.Minutes
	for _, s := range spans {
		if !s.Start.Before(s.End) {
			continue
		}
		cutHours = append(cutHours, HourRange{From: ceilHour(s.Start), To: UnixHour(s.End)})
		cutMinutes = subtractSpan(cutMinutes, s)
	}
	return UsageReadPlan{Hours: subtractHours(p.Hours, MergeHours(cutHours)), Minutes: cutMinutes}
}

// subtractSpan is ranges less c.
func subtractSpan(ranges []Span, c Span) []Span {
	var out []Span
	for _, r := range ranges {
		if !c.Start.Before(r.End) || !c.End.After(r.Start) {
			out = append(out, r)
			continue
		}
		if r.Start.Before(c.Start) {
			out = append(out, Span{Start: r.Start, End: c.Start})
		}
		if c.End.Before(r.End) {
			out = append(out, Span{Start: c.End, End: r.End})
		}
	}
	return out
}
