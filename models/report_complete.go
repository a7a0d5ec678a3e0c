package models

// TrendFromSnapshots says whether a report of week w may read its trend
// weeks from their snapshots, given the hours whose minutes changed since
// the rollup job summed them (dirty). A report that reads a trend week from
// its snapshot tells whether a booking that began in it was used from the
// hourly sums; while any hour of the report's four weeks holds minutes the
// sums do not (late minutes, a restamp), those sums are not the data, and
// a week frozen from them would differ from its recomputation (issue 37: a
// booking used from 22:00 whose minutes came late was frozen as a
// no-show). The report then reads the usage of all four weeks, the dirty
// hours from their minutes; the job clears them within minutes.
func TrendFromSnapshots(w Week, dirty []HourRange) bool {
	from := UnixHour(w.Prev(TrendWeeks - 1).Start)
	to := ceilHour(w.End)
	return len(ClipHours(dirty, from, to)) == 0
}
