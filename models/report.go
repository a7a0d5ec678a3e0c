package models

import (
	"strconv"
	"strings"
	"time"
)

// ReportRules are the report's knobs, read from the environment in cmd
// (GPUBOOK_REPORT_BUSY_UTIL_PCT, GPUBOOK_REPORT_UNBOOKED_WEIGHT,
// GPUBOOK_REPORT_SCHEDULE). docs/reports.md defines every figure they
// feed. A booked GPU-minute is busy when the booker's own processes run on
// the GPU and its utilisation reaches BusyUtilPct; memory alone never makes
// a minute busy, because a card held at 0 % is the hoarding the report is
// there to show. UnbookedWeight is what a GPU-hour used without a booking
// weighs in the fair-share usage, against 1 for a booked GPU-hour; above
// 1, a user who books nothing and uses GPUs has a worse fair-share factor
// than one who booked and used the same hours.
type ReportRules struct {
	BusyUtilPct    float64
	UnbookedWeight float64
	Schedule       Schedule
	// IdleWeight (GPUBOOK_REPORT_IDLE_WEIGHT) is what a booked GPU-hour in
	// which the booker did not work, and an hour cancelled late, weigh in
	// the fair-share usage; at least UnbookedWeight (report_charge.go).
	IdleWeight float64
	// NoShowPct (GPUBOOK_REPORT_NO_SHOW_PCT): a booking whose booker was
	// busy for under this share of its GPU-time is a no-show.
	NoShowPct float64
	// LateCancel (GPUBOOK_REPORT_LATE_CANCEL): the hours of a booking its
	// owner cancelled less than this before they start are charged as
	// booked-idle; negative turns it off.
	LateCancel time.Duration
	// LowIntensityPct (GPUBOOK_REPORT_LOW_INTENSITY_PCT) marks a booking
	// low-intensity when its busy minutes average under it: a busy loop at
	// the busy threshold makes every minute busy, not the booking well used.
	LowIntensityPct float64
}

// DefaultReportRules: a GPU-minute is busy at 5 % utilisation, an unbooked
// GPU-hour weighs 1.5 busy booked ones (so that using without booking is
// never as good as booking: docs/reports.md) and an idle booked one 2 (so
// that holding a card idle is worse still), a booking under 10 % busy is a
// no-show, hours cancelled under 2 h ahead are charged as idle, and the
// report goes out Monday 08:00 cluster time.
var DefaultReportRules = ReportRules{BusyUtilPct: 5, UnbookedWeight: 1.5,
	IdleWeight: DefaultIdleWeight, NoShowPct: DefaultNoShowPct, LateCancel: DefaultLateCancel,
	Schedule: Schedule{Weekday: time.Monday, Hour: 8}, LowIntensityPct: 25}

// OrDefault fills unset rules with the defaults, so a zero Config works.
func (r ReportRules) OrDefault() ReportRules {
	if r.BusyUtilPct == 0 {
		r.BusyUtilPct = DefaultReportRules.BusyUtilPct
	}
	if r.UnbookedWeight <= 0 {
		r.UnbookedWeight = DefaultReportRules.UnbookedWeight
	}
	if r.Schedule == (Schedule{}) {
		r.Schedule = DefaultReportRules.Schedule
	}
	r = r.chargeOrDefault()
	if r.LowIntensityPct <= 0 {
		r.LowIntensityPct = DefaultReportRules.LowIntensityPct
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
// docs/reports.md defines each of them in words.
type Figures struct {
	BookedSec        int64 // GPU-seconds of confirmed bookings inside the span
	BusyMin          int64 // booked GPU-minutes with the booker's own processes at or above the busy threshold
	HeldIdleMin      int64 // booked GPU-minutes with the booker's processes holding memory below the threshold
	NoUserDataMin    int64 // booked GPU-minutes at or above the threshold with no per-user rows to say whose
	UnbookedMin      int64 // GPU-minutes of the user's processes on a GPU they had not booked
	GivenBackSec     int64 // GPU-seconds released early, counted when released
	AutoGivenBackSec int64 // the part of GivenBackSec released by the idle rule
	NoShows          int64 // bookings that ended in the span without one busy minute of the booker's own
	PriorityMade     int64
	PriorityApproved int64
	Preempted        int64
	// LateCancels is the user's bookings cancelled by them less than the
	// rules' LateCancel before they started, counted in the span of the
	// start; LateCancelSec their GPU-seconds within that lead, charged as
	// booked-idle.
	LateCancels, LateCancelSec int64
	// UtilMin is the booked GPU-minutes with a utilisation recorded (not
	// MIG), UtilTenths their utilisation summed in tenths of a percent:
	// the mean utilisation of the booked GPU-minutes (MeanUtil).
	UtilMin, UtilTenths int64
	// LowIntensity is the bookings that ended in the span whose busy
	// minutes in its week averaged under the rules' LowIntensityPct.
	LowIntensity int64
}

// Add sums two spans' figures (the days of a week make the week).
func (f Figures) Add(g Figures) Figures {
	return Figures{f.BookedSec + g.BookedSec, f.BusyMin + g.BusyMin, f.HeldIdleMin + g.HeldIdleMin,
		f.NoUserDataMin + g.NoUserDataMin, f.UnbookedMin + g.UnbookedMin,
		f.GivenBackSec + g.GivenBackSec, f.AutoGivenBackSec + g.AutoGivenBackSec, f.NoShows + g.NoShows,
		f.PriorityMade + g.PriorityMade, f.PriorityApproved + g.PriorityApproved, f.Preempted + g.Preempted,
		f.LateCancels + g.LateCancels, f.LateCancelSec + g.LateCancelSec,
		f.UtilMin + g.UtilMin, f.UtilTenths + g.UtilTenths, f.LowIntensity + g.LowIntensity}
}

// HasMeanUtil reports whether any booked minute had a utilisation
// recorded: without one the mean is "n/a", not 0 %.
func (f Figures) HasMeanUtil() bool { return f.UtilMin > 0 }

// MeanUtil is the mean GPU utilisation of the booked GPU-minutes, as a
// ratio (0.375 is 37.5 %): the figure jobstats leads with. Efficiency
// says how much of the booking was used at all; this says how hard.
func (f Figures) MeanUtil() float64 {
	if f.UtilMin == 0 {
		return 0
	}
	return float64(f.UtilTenths) / 10 / 100 / float64(f.UtilMin)
}

// BookedHours is GPU-hours booked.
func (f Figures) BookedHours() float64 { return float64(f.BookedSec) / 3600 }

// BusyHours is GPU-hours busy during the user's bookings, never more than
// booked (a minute that starts inside a booking released mid-minute counts
// whole, so the raw count can pass the booked seconds by a fraction).
func (f Figures) BusyHours() float64 { return min(float64(f.BusyMin)/60, f.BookedHours()) }

// IdleHours is GPU-hours booked but not busy: the waste the report is
// about. It includes the held-idle hours.
func (f Figures) IdleHours() float64 { return f.BookedHours() - f.BusyHours() }

// HeldIdleHours is the part of IdleHours in which the booker's processes
// held memory without working: the card was taken from others for nothing.
func (f Figures) HeldIdleHours() float64 { return min(float64(f.HeldIdleMin)/60, f.IdleHours()) }

// HasEfficiency reports whether efficiency means anything: with nothing
// booked it is "n/a", not 0 %.
func (f Figures) HasEfficiency() bool { return f.BookedSec > 0 }

// Efficiency is busy / booked; see HasEfficiency for the empty case.
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
	return f.BookedSec > 0 || f.UnbookedMin > 0 || f.NoShows > 0 || f.PriorityMade > 0 || f.GivenBackSec > 0 || f.LateCancels > 0
}
