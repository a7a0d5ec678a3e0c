package models

import "time"

// PeakSpan is peak hours on some weekdays as another zone's clock reads
// them: from From to To, minutes after midnight; a To not after From ends
// on the next day (09:00–19:00 in Shanghai is 20:00–06:00 in New York).
type PeakSpan struct {
	Days     []time.Weekday // the days it starts on, in the week's order of its windows
	From, To int
}

// NextDay reports whether the span ends on the day after it starts.
func (p PeakSpan) NextDay() bool { return p.To <= p.From }

// PeakSpansIn reads the peak windows of the quota week that starts at ws
// (Monday 00:00 in the cluster's zone, ws.Location()) on the clock of zone:
// windows that start and end at the same times there share a span, so a
// fixed offset gives one span, and a week in which only one of the two
// zones changes to or from summer time gives two. Spans come in the order
// of their first window.
func PeakSpansIn(s PeakSchedule, ws time.Time, zone *time.Location) []PeakSpan {
	var out []PeakSpan
	for _, w := range s.windows(ws, NextWeek(ws), ws.Location()) {
		a, b := w[0].In(zone), w[1].In(zone)
		from, to := a.Hour()*60+a.Minute(), b.Hour()*60+b.Minute()
		if to == 0 && b.After(a) && b.Sub(a) <= 24*time.Hour && b.YearDay() != a.YearDay() {
			to = 24 * 60 // ends at midnight: "–24:00", not a next-day "00:00"
		}
		i := 0
		for i < len(out) && (out[i].From != from || out[i].To != to) {
			i++
		}
		if i == len(out) {
			out = append(out, PeakSpan{From: from, To: to})
		}
		out[i].Days = append(out[i].Days, a.Weekday())
	}
	return out
}

// ZonesDiffer reports whether two zones read any of the given moments
// differently: "Etc/UTC" and "UTC" do not; Berlin and Shanghai do.
func ZonesDiffer(a, b *time.Location, at ...time.Time) bool {
	for _, t := range at {
		_, oa := t.In(a).Zone()
		_, ob := t.In(b).Zone()
		if oa != ob {
			return true
		}
	}
	return false
}
