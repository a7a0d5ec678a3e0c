package models

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Week is one report week: Monday 00:00 to the next Monday 00:00 in the
// cluster's time zone, named by its ISO 8601 number ("2026-W49"). Start and
// End are wall-clock midnights in that zone, so a week with a DST change is
// 167 or 169 hours long, as the people in it lived it.
type Week struct {
	Year, Num  int
	Start, End time.Time
}

// String names the week as ISO 8601 does, the form the CLI and URLs use.
func (w Week) String() string { return fmt.Sprintf("%04d-W%02d", w.Year, w.Num) }

// WeekOf returns the week that contains t, seen in loc.
func WeekOf(t time.Time, loc *time.Location) Week {
	lt := t.In(loc)
	y, m, d := lt.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, loc)
	start := day.AddDate(0, 0, -mondayOffset(day.Weekday()))
	year, num := start.AddDate(0, 0, 3).ISOWeek() // the Thursday decides the ISO year
	return Week{Year: year, Num: num, Start: start, End: start.AddDate(0, 0, 7)}
}

// ParseWeek reads "2026-W49" (or "2026-w49") as a week in loc.
func ParseWeek(s string, loc *time.Location) (Week, error) {
	bad := NewError(EINVALID, M("err.report_week_invalid", "Week", s))
	ys, ns, ok := strings.Cut(strings.ToUpper(strings.TrimSpace(s)), "-W")
	if !ok || len(ys) != 4 || len(ns) != 2 {
		return Week{}, bad
	}
	y, err1 := strconv.Atoi(ys)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || n < 1 || n > 53 {
		return Week{}, bad
	}
	// 4 January is always in week 1.
	jan4 := time.Date(y, 1, 4, 0, 0, 0, 0, loc)
	w := WeekOf(jan4.AddDate(0, 0, 7*(n-1)), loc)
	if w.Year != y || w.Num != n {
		return Week{}, bad // week 53 of a year that has 52
	}
	return w, nil
}

// Prev returns the week n weeks before w.
func (w Week) Prev(n int) Week {
	return WeekOf(w.Start.AddDate(0, 0, -7*n), w.Start.Location())
}

// Next returns the week after w.
func (w Week) Next() Week { return WeekOf(w.End, w.Start.Location()) }

// Days returns the week's seven days as [start, end) pairs of local midnights.
func (w Week) Days() []Span {
	out := make([]Span, 7)
	for i := range out {
		out[i] = Span{Start: w.Start.AddDate(0, 0, i), End: w.Start.AddDate(0, 0, i+1)}
	}
	return out
}

// Span is a half-open time range [Start, End).
type Span struct{ Start, End time.Time }

// Clip cuts s at asOf, so that "this week so far" counts nothing after now.
// An empty span (End <= Start) counts nothing.
func (s Span) Clip(asOf time.Time) Span {
	if asOf.Before(s.End) {
		s.End = asOf
	}
	if s.End.Before(s.Start) {
		s.End = s.Start
	}
	return s
}

func mondayOffset(d time.Weekday) int { return (int(d) + 6) % 7 }

// WeekdayIndex is 0 for Monday … 6 for Sunday, the order of the heat map.
func WeekdayIndex(t time.Time) int { return mondayOffset(t.Weekday()) }
