package models

import (
	"sync"
	"time"
)

// The spans one report reads, in this order: the seven days of the week
// (indexes 0–6, for the per-day chart; together they are the week), then
// the three weeks before it (7–9, for the trend and the decayed usage).
// Reading all of them in one pass per query keeps a report run to a few
// scans of the per-minute rows.
const (
	ReportDays = 7
	TrendWeeks = 4
)

// ReportSpans lays out the spans of week w, each cut at asOf.
func ReportSpans(w Week, asOf time.Time) []Span {
	out := make([]Span, 0, ReportDays+TrendWeeks-1)
	for _, d := range w.Days() {
		out = append(out, d.Clip(asOf))
	}
	for k := 1; k < TrendWeeks; k++ {
		p := w.Prev(k)
		out = append(out, Span{Start: p.Start, End: p.End}.Clip(asOf))
	}
	return out
}

// WeekData is everything the database computed for one week, for every
// user at once: the input of every report, team table and cluster summary.
type WeekData struct {
	Week  Week
	AsOf  time.Time
	Spans []Span
	// ByUser holds one Figures per span for each user with any activity.
	ByUser      map[int64][]Figures
	Users       []User
	Memberships []Membership // with TeamName
	// TeamQuotas are the teams' weekly GPU-hour quotas (policy
	// max_gpu_hours_week, GPU-minutes), the weights of EntitledShares.
	TeamQuotas map[int64]int64
	// ClusterBusyMin is per span the busy GPU-minutes of the whole cluster,
	// booked or not (the utilisation).
	ClusterBusyMin []int64
	// HourBusyMin maps a UTC hour (Unix seconds / 3600) of the spans to the
	// cluster's busy GPU-minutes in it (the heat map).
	HourBusyMin     map[int64]int64
	GPUCount        int
	PendingRequests int64

	totalsOnce sync.Once
	totalsVal  weekTotals
}

// spanFigures returns uid's figures per span (zeros when inactive).
func (d *WeekData) spanFigures(uid int64) []Figures {
	if f, ok := d.ByUser[uid]; ok {
		return f
	}
	return make([]Figures, len(d.Spans))
}

// WeekFigures is uid's figures for the whole week (the sum of its days).
func (d *WeekData) WeekFigures(uid int64) Figures {
	var sum Figures
	for _, f := range d.spanFigures(uid)[:ReportDays] {
		sum = sum.Add(f)
	}
	return sum
}

// Trend is uid's figures for the last TrendWeeks weeks, oldest first,
// ending with the report's week.
func (d *WeekData) Trend(uid int64) []TrendPoint {
	sf := d.spanFigures(uid)
	out := make([]TrendPoint, 0, TrendWeeks)
	for k := TrendWeeks - 1; k >= 1; k-- {
		out = append(out, TrendPoint{Week: d.Week.Prev(k), Figures: sf[ReportDays+k-1]})
	}
	return append(out, TrendPoint{Week: d.Week, Figures: d.WeekFigures(uid)})
}

// TrendPoint is one week of the trend.
type TrendPoint struct {
	Week    Week
	Figures Figures
}

// DayPoint is one day of the per-day chart.
type DayPoint struct {
	Day     time.Time // local midnight
	Figures Figures
}

// DaysOf is uid's figures per day of the week.
func (d *WeekData) DaysOf(uid int64) []DayPoint {
	sf := d.spanFigures(uid)
	out := make([]DayPoint, ReportDays)
	for i := range out {
		out[i] = DayPoint{Day: d.Week.Start.AddDate(0, 0, i), Figures: sf[i]}
	}
	return out
}

// clusterWeek is the sum of every user's week.
func (d *WeekData) clusterWeek() Figures {
	var sum Figures
	for uid := range d.ByUser {
		sum = sum.Add(d.WeekFigures(uid))
	}
	return sum
}
