package models

import (
	"strconv"
	"strings"
	"time"
)

// ReportRules are the report's knobs, read from the environment in cmd
// (GPUBOOK_REPORT_BUSY_UTIL_PCT, GPUBOOK_REPORT_BUSY_MEM_MIB,
// GPUBOOK_REPORT_SCHEDULE). A GPU-minute is busy when its utilisation
// reaches BusyUtilPct or the booker's processes hold BusyMemMiB on it: a
// job that loads a model and waits for data uses the card even at 0 %.
type ReportRules struct {
	BusyUtilPct float64
	BusyMemMiB  int64
	Schedule    Schedule
}

// DefaultReportRules: a GPU-minute is busy at 5 % utilisation or 1 GiB
// held, and the report goes out Monday 08:00 cluster time.
var DefaultReportRules = ReportRules{BusyUtilPct: 5, BusyMemMiB: 1024,
	Schedule: Schedule{Weekday: time.Monday, Hour: 8}}

// OrDefault fills unset rules with the defaults, so a zero Config works.
func (r ReportRules) OrDefault() ReportRules {
	if r.BusyUtilPct == 0 && r.BusyMemMiB == 0 {
		r.BusyUtilPct, r.BusyMemMiB = DefaultReportRules.BusyUtilPct, DefaultReportRules.BusyMemMiB
	}
	if r.Schedule == (Schedule{}) {
		r.Schedule = DefaultReportRules.Schedule
	}
	return r
}

// Schedule is a weekly time in the cluster's zone, e.g. "mon 08:00".
type Schedule struct {
	Weekday      time.Weekday
	Hour, Minute int
}

var weekdayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// ParseSchedule reads "mon 08:00".
func ParseSchedule(s string) (Schedule, error) {
	bad := NewError(EINVALID, M("err.report_schedule_invalid", "Value", s))
	day, clock, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), " ")
	if !ok {
		return Schedule{}, bad
	}
	hh, mm, ok := strings.Cut(strings.TrimSpace(clock), ":")
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if !ok || err1 != nil || err2 != nil || h < 0 || h > 23 || m < 0 || m > 59 {
		return Schedule{}, bad
	}
	for i, n := range weekdayNames {
		if strings.HasPrefix(day, n) {
			return Schedule{Weekday: time.Weekday(i), Hour: h, Minute: m}, nil
		}
	}
	return Schedule{}, bad
}

// String is the form ParseSchedule reads.
func (s Schedule) String() string {
	return weekdayNames[s.Weekday] + " " + twoDigits(s.Hour) + ":" + twoDigits(s.Minute)
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// DueWeek returns the latest week whose report is due at now: the week
// before the one in which the schedule's moment last passed. Before Monday
// 08:00 the report of two weeks ago is the latest due one; a server that was
// down on Monday sends it when it is back (catch-up), because the due week
// stays the same all week.
func (s Schedule) DueWeek(now time.Time, loc *time.Location) Week {
	w := WeekOf(now, loc)
	moment := w.Start.AddDate(0, 0, mondayOffset(s.Weekday))
	moment = time.Date(moment.Year(), moment.Month(), moment.Day(), s.Hour, s.Minute, 0, 0, loc)
	if now.Before(moment) {
		return w.Prev(2)
	}
	return w.Prev(1)
}

// Figures are one user's raw counts over one span, as the database
// computes them. Seconds and minutes stay integers so that SQLite and
// PostgreSQL agree to the unit; hours and ratios are derived once, below.
type Figures struct {
	BookedSec        int64 // GPU-seconds of confirmed bookings inside the span
	BusyMin          int64 // busy GPU-minutes inside the user's bookings
	UnbookedMin      int64 // GPU-minutes of the user's processes outside their bookings
	GivenBackSec     int64 // GPU-seconds released early, counted when released
	AutoGivenBackSec int64 // the part of GivenBackSec released by the idle rule
	NoShows          int64 // bookings that ended in the span without one busy minute
	PriorityMade     int64
	PriorityApproved int64
	Preempted        int64
}

// Add sums two spans' figures (the days of a week make the week).
func (f Figures) Add(g Figures) Figures {
	return Figures{f.BookedSec + g.BookedSec, f.BusyMin + g.BusyMin, f.UnbookedMin + g.UnbookedMin,
		f.GivenBackSec + g.GivenBackSec, f.AutoGivenBackSec + g.AutoGivenBackSec, f.NoShows + g.NoShows,
		f.PriorityMade + g.PriorityMade, f.PriorityApproved + g.PriorityApproved, f.Preempted + g.Preempted}
}

// BookedHours is GPU-hours booked.
func (f Figures) BookedHours() float64 { return float64(f.BookedSec) / 3600 }

// BusyHours is GPU-hours busy during the user's bookings, never more than
// booked (a minute that starts inside a booking released mid-minute counts
// whole, so the raw count can pass the booked seconds by a fraction).
func (f Figures) BusyHours() float64 { return min(float64(f.BusyMin)/60, f.BookedHours()) }

// IdleHours is GPU-hours booked but not busy: the waste the report is about.
func (f Figures) IdleHours() float64 { return f.BookedHours() - f.BusyHours() }

// Efficiency is busy / booked, 0 when nothing was booked.
func (f Figures) Efficiency() float64 {
	if f.BookedSec == 0 {
		return 0
	}
	return f.BusyHours() / f.BookedHours()
}

// UnbookedHours is GPU-hours used without a booking.
func (f Figures) UnbookedHours() float64 { return float64(f.UnbookedMin) / 60 }

// GivenBackHours is GPU-hours released early (by hand or by the idle rule).
func (f Figures) GivenBackHours() float64 { return float64(f.GivenBackSec) / 3600 }

// AutoGivenBackHours is the part of GivenBackHours the idle rule released.
func (f Figures) AutoGivenBackHours() float64 { return float64(f.AutoGivenBackSec) / 3600 }

// Active reports whether the user did anything the report can speak of;
// a user with nothing gets the short, friendly report instead of zeros.
func (f Figures) Active() bool {
	return f.BookedSec > 0 || f.UnbookedMin > 0 || f.NoShows > 0 || f.PriorityMade > 0 || f.GivenBackSec > 0
}
