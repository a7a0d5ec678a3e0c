package models

import (
	"testing"
	"time"
)

func TestWeekBeforePortal(t *testing.T) {
	w := WeekOf(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), time.UTC) // Mon 30 Nov – Mon 7 Dec
	for _, tc := range []struct {
		name  string
		first time.Time
		ok    bool
		want  bool
	}{
		{"no booking or usage at all", time.Time{}, false, true},
		{"first use after the week", w.End.Add(time.Hour), true, true},
		{"first use at the week's end", w.End, true, true},
		{"first use in its last minute", w.End.Add(-time.Minute), true, false},
		{"history from long before", w.Start.AddDate(-1, 0, 0), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WeekBeforePortal(w, tc.first, tc.ok); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
