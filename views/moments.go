package views

import "time"

// A time of day alone is read as today's: every instant that is not today
// carries its day, and a range that crosses midnight shows both dates
// (issue 41: "until 17:00" for a booking ending on Tuesday, a 24-hour
// booking shown "Mon 7 Dec 00:00–00:00").

// DayOffset is how many calendar days t's day lies after now's day in loc:
// 0 today, 1 tomorrow, -1 yesterday. It counts calendar days, so a
// 23-hour or 25-hour day of a daylight-saving change is still one.
func DayOffset(now, t time.Time, loc *time.Location) int {
	n, x := now.In(loc), t.In(loc)
	a := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, time.UTC)
	b := time.Date(x.Year(), x.Month(), x.Day(), 0, 0, 0, 0, time.UTC)
	return int(b.Sub(a) / (24 * time.Hour))
}

// RangeLabel is a range for people, start and stop already in the
// viewer's zone: "Mon 7 Dec 09:00–17:00" within a day, both days when it
// crosses midnight ("Mon 7 Dec 00:00–Tue 8 Dec 00:00"). day writes a
// date in the viewer's language.
func RangeLabel(start, stop time.Time, day func(time.Time) string) string {
	out := day(start) + " " + start.Format("15:04") + "–"
	if !sameDay(start, stop) {
		out += day(stop) + " "
	}
	return out + stop.Format("15:04")
}

func sameDay(a, b time.Time) bool {
	return a.Year() == b.Year() && a.YearDay() == b.YearDay()
}

// At is an instant in a sentence, in the viewer's zone: "today 17:00",
// "tomorrow 09:00", "yesterday 22:10", else its day ("Tue 8 Dec 17:00",
// with the year when it is not this one).
func (p *Page) At(t time.Time) string {
	clock := p.Clock(t)
	switch DayOffset(p.Now, t, p.Location) {
	case 0:
		return p.Tr("time.today_at", "Clock", clock)
	case 1:
		return p.Tr("time.tomorrow_at", "Clock", clock)
	case -1:
		return p.Tr("time.yesterday_at", "Clock", clock)
	}
	return p.DayTitle(t.In(p.Location)) + " " + clock
}

// Until is the end of a span that began at from, for "from – until": the
// time of day alone when both fall on one day in the viewer's zone, its
// full date and time otherwise.
func (p *Page) Until(from, until time.Time) string {
	if sameDay(from.In(p.Location), until.In(p.Location)) {
		return p.Clock(until)
	}
	return p.DateTime(until)
}
