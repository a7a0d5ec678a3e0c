package models

import (
	"sort"
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
	// TeamWeights are the teams' share weights (teams.share_weight, set on
	// the admin team page), the weights of EntitledShares.
	TeamWeights map[int64]float64
	// Rules are the rules the figures were computed with; the fair-share
	// usage reads the unbooked weight from them.
	Rules ReportRules
	// ClusterBusyMin is per span the busy GPU-minutes of the whole cluster,
	// booked or not (the utilisation).
	ClusterBusyMin []int64
	// ClusterUnbookedMin is per span the GPU-minutes on which anyone's
	// processes ran without a booking, each GPU-minute once however many
	// users shared it.
	ClusterUnbookedMin []int64
	// HourBusyMin maps a UTC hour (Unix seconds / 3600) of the spans to the
	// cluster's busy GPU-minutes in it (the heat map).
	HourBusyMin map[int64]int64
	// UsedBy is per booker the other users whose processes ran on the
	// booker's bookings in the week, with their minutes: that use is their
	// unbooked use, never the booker's busy time.
	UsedBy map[int64][]UserMinutes
	// Unmapped is the week's use by Unix accounts that map to no gpubook
	// user, by name (report_unix.go): charged to nobody, so shown to admins.
	Unmapped []UnixMinutes
	// Coming is the confirmed bookings' GPU ranges in the week after Week,
	// one per booked GPU: the known part of the quiet-hours advice.
	Coming          []Span
	GPUCount        int
	PendingRequests int64
	// State and FrozenAt say whether the figures can still change (the
	// page labels a week in progress) and since when they are frozen;
	// they describe the copy read, so they are not part of a snapshot.
	State    WeekState `json:"-"`
	FrozenAt time.Time `json:"-"`
	// FrozenBy is who froze it: FrozenBySend, FrozenByRead, or the admin
	// who recomputed it ("auto" in rows from before the distinction).
	FrozenBy string `json:"-"`

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

// WeekFigures is uid's figures for the whole week (the sum of its days);
// zero, without allocating, for a user with no activity.
func (d *WeekData) WeekFigures(uid int64) Figures {
	var sum Figures
	figs, ok := d.ByUser[uid]
	if !ok {
		return sum
	}
	for _, f := range figs[:ReportDays] {
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
		out = append(out, TrendPoint{Week: d.Week.Prev(k), Figures: sf[TrendSpan(k)]})
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

// UserMinutes is another user's minutes on one's bookings.
type UserMinutes struct {
	UserID  int64
	Name    string
	Minutes int64
}

// Hours is the minutes as GPU-hours.
func (u UserMinutes) Hours() float64 { return float64(u.Minutes) / 60 }

// NameUsedBy fills the names of UsedBy from Users and orders each list
// by minutes, most first; the store calls it once Users are read.
func (d *WeekData) NameUsedBy() {
	names := make(map[int64]string, len(d.Users))
	for _, u := range d.Users {
		names[u.ID] = u.Name
	}
	for _, list := range d.UsedBy {
		for i := range list {
			list[i].Name = names[list[i].UserID]
		}
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].Minutes != list[j].Minutes {
				return list[i].Minutes > list[j].Minutes
			}
			return list[i].Name < list[j].Name
		})
	}
}
