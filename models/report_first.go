package models

import (
	"sort"
	"time"
)

// WeekBeforePortal reports whether week w ended before the portal's first
// booking or usage (first; ok is false while there is none): such a week
// is not sent, and so not frozen, because there is nothing in it yet —
// a new portal's first start would otherwise freeze the week before, and
// the history imported after it would change nothing without a
// recompute.
func WeekBeforePortal(w Week, first time.Time, ok bool) bool {
	return !ok || !first.Before(w.End)
}

// Who froze a week (report_weeks.frozen_by), besides the admin who
// recomputed it: its report was sent (the weekly job, "gpubook report
// send"), or it was first read FreezeAfter after its end with no report
// sent. Only the first may say "as in the report that was sent".
const (
	FrozenBySend = "send"
	FrozenByRead = "read"
)

// ImportedWeeks lists, oldest first, the weeks whose report reads the
// spans given (imported bookings): the week a span lies in and the
// TrendWeeks−1 weeks after it, whose trend and fair share count it.
// "gpubook import bookings" names those of them already frozen, which
// keep their figures until recomputed.
func ImportedWeeks(spans []Span, loc *time.Location) []Week {
	seen := map[string]bool{}
	var out []Week
	for _, s := range spans {
		for w := WeekOf(s.Start, loc); w.Start.Before(s.End); w = w.Next() {
			x := w
			for k := 0; k < TrendWeeks; k++ {
				if !seen[x.String()] {
					seen[x.String()] = true
					out = append(out, x)
				}
				x = x.Next()
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}
