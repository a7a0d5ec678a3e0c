package models

import (
	"fmt"
	"strings"
	"time"
)

// PeakSchedule is the weekly window of peak hours, in the cluster's zone:
// on the ticked days, from From to To (minutes after midnight; To may be
// 1440 for midnight). Stricter limits may apply during it.
type PeakSchedule struct {
	Enabled bool
	Days    [7]bool // indexed by time.Weekday
	From    int
	To      int
}

// DefaultPeakSchedule is Monday to Friday, 09:00 to 19:00.
func DefaultPeakSchedule() PeakSchedule {
	s := PeakSchedule{Enabled: true, From: 9 * 60, To: 19 * 60}
	for d := time.Monday; d <= time.Friday; d++ {
		s.Days[d] = true
	}
	return s
}

// Validate checks a schedule typed by an admin.
func (s PeakSchedule) Validate() error {
	fe := FieldErrors{}
	if s.From < 0 || s.From >= 24*60 {
		fe.Add("peak_from", M("err.time_invalid"))
	}
	if s.To <= s.From || s.To > 24*60 {
		fe.Add("peak_to", M("policy.err.peak_to"))
	}
	return fe.Err()
}

// String encodes the schedule for the settings table: "1,2,3,4,5 09:00-19:00",
// or "off …" when disabled.
func (s PeakSchedule) String() string {
	var days []string
	for d, on := range s.Days {
		if on {
			days = append(days, fmt.Sprint(d))
		}
	}
	prefix := ""
	if !s.Enabled {
		prefix = "off "
	}
	return fmt.Sprintf("%s%s %s-%s", prefix, strings.Join(days, ","), ClockText(s.From), ClockText(s.To))
}

// ParsePeakSchedule reads what String wrote; ok is false for anything else.
func ParsePeakSchedule(v string) (PeakSchedule, bool) {
	var s PeakSchedule
	s.Enabled = !strings.HasPrefix(v, "off ")
	v = strings.TrimPrefix(v, "off ")
	parts := strings.Fields(v)
	if len(parts) == 1 {
		parts = []string{"", parts[0]}
	}
	if len(parts) != 2 {
		return s, false
	}
	for _, d := range strings.Split(parts[0], ",") {
		var n int
		if d == "" {
			continue
		}
		if _, err := fmt.Sscanf(d, "%d", &n); err != nil || n < 0 || n > 6 {
			return s, false
		}
		s.Days[n] = true
	}
	from, to, ok := strings.Cut(parts[1], "-")
	var okF, okT bool
	s.From, okF = ParseClock(from)
	s.To, okT = ParseClock(to)
	return s, ok && okF && okT && s.Validate() == nil
}

// ClockText formats minutes after midnight as "09:00" (1440 is "24:00").
func ClockText(min int) string { return fmt.Sprintf("%02d:%02d", min/60, min%60) }

// ParseClock reads "09:00" or "24:00" as minutes after midnight.
func ParseClock(s string) (int, bool) {
	var h, m int
	if n, err := fmt.Sscanf(strings.TrimSpace(s), "%d:%d", &h, &m); err != nil || n != 2 || h < 0 || m < 0 || m > 59 || h*60+m > 24*60 {
		return 0, false
	}
	return h*60 + m, true
}

// PeakPart is a piece of a booking that lies wholly in peak or off-peak time.
type PeakPart struct {
	Start, End time.Time
	Period     string // PeriodPeak or PeriodOffPeak
}

// SplitPeak cuts [start, end) at the edges of the peak windows in loc.
// Windows are built from wall-clock dates with time.Date, so a day of 23 or
// 25 hours (DST) still has its peak at 09:00–19:00 local time.
func SplitPeak(start, end time.Time, s PeakSchedule, loc *time.Location) []PeakPart {
	if !end.After(start) {
		return nil
	}
	var out []PeakPart
	cur := start
	for _, w := range s.windows(start, end, loc) {
		if w[0].After(cur) {
			out = append(out, PeakPart{Start: cur, End: w[0], Period: PeriodOffPeak})
		}
		out = append(out, PeakPart{Start: w[0], End: w[1], Period: PeriodPeak})
		cur = w[1]
	}
	if end.After(cur) {
		out = append(out, PeakPart{Start: cur, End: end, Period: PeriodOffPeak})
	}
	return out
}

// windows lists the peak windows that overlap [start, end), clipped to it, in order.
func (s PeakSchedule) windows(start, end time.Time, loc *time.Location) [][2]time.Time {
	if !s.Enabled || s.To <= s.From {
		return nil
	}
	l := start.In(loc)
	var out [][2]time.Time
	for d := time.Date(l.Year(), l.Month(), l.Day()-1, 0, 0, 0, 0, loc); d.Before(end); d = time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc) {
		if !s.Days[d.Weekday()] {
			continue
		}
		ws := time.Date(d.Year(), d.Month(), d.Day(), 0, s.From, 0, 0, loc)
		we := time.Date(d.Year(), d.Month(), d.Day(), 0, s.To, 0, 0, loc)
		if ws.Before(start) {
			ws = start
		}
		if we.After(end) {
			we = end
		}
		if we.After(ws) {
			out = append(out, [2]time.Time{ws, we})
		}
	}
	return out
}

// IsPeak reports whether t lies in a peak window.
func (s PeakSchedule) IsPeak(t time.Time, loc *time.Location) bool {
	return len(s.windows(t, t.Add(time.Second), loc)) > 0
}

// WeekStart returns Monday 00:00 of t's week in loc (nil: UTC), the start of a quota week.
func WeekStart(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	l := t.In(loc)
	back := (int(l.Weekday()) + 6) % 7
	return time.Date(l.Year(), l.Month(), l.Day()-back, 0, 0, 0, 0, loc)
}

// NextWeek returns the Monday 00:00 after ws (168 hours later, give or take an hour of DST).
func NextWeek(ws time.Time) time.Time {
	return time.Date(ws.Year(), ws.Month(), ws.Day()+7, 0, 0, 0, 0, ws.Location())
}

// overlapMinutes is the length of [aStart, aEnd) ∩ [bStart, bEnd) in minutes.
func overlap(aStart, aEnd, bStart, bEnd time.Time) time.Duration {
	s, e := aStart, aEnd
	if bStart.After(s) {
		s = bStart
	}
	if bEnd.Before(e) {
		e = bEnd
	}
	if !e.After(s) {
		return 0
	}
	return e.Sub(s)
}
