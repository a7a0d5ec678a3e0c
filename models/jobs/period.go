package jobs

import (
	"fmt"
	"time"
)

// WeeklyPeriod returns a periodFunc for RegisterPeriodic that is due every
// week at weekday hh:mm in loc (e.g. Monday 08:00 cluster time). The period
// is the ISO week of the latest due moment, "2026-W50" for Monday 7
// December 2026 08:00; before that moment it is the week before. Labels
// sort in time order across years ("2026-W53" < "2027-W01").
func WeeklyPeriod(loc *time.Location, weekday time.Weekday, hour, minute int) func(time.Time) string {
	return func(now time.Time) string {
		local := now.In(loc)
		back := (int(local.Weekday()) - int(weekday) + 7) % 7
		y, m, d := local.AddDate(0, 0, -back).Date()
		due := time.Date(y, m, d, hour, minute, 0, 0, loc)
		if due.After(now) {
			y, m, d = due.AddDate(0, 0, -7).Date()
			due = time.Date(y, m, d, hour, minute, 0, 0, loc)
		}
		year, week := due.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", year, week)
	}
}

// DailyPeriod is due every day at hh:mm in loc; the period is the date of
// the latest due moment ("2026-12-07").
func DailyPeriod(loc *time.Location, hour, minute int) func(time.Time) string {
	return func(now time.Time) string {
		local := now.In(loc)
		due := time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, loc)
		if due.After(now) {
			due = due.AddDate(0, 0, -1)
		}
		return due.Format("2006-01-02")
	}
}
