package models

import (
	"testing"
	"time"
)

func TestTrendFromSnapshots(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	w, err := ParseWeek("2026-W49", berlin)
	if err != nil {
		t.Fatal(err)
	}
	first := UnixHour(w.Prev(TrendWeeks - 1).Start) // Monday of W46, 00:00 Berlin
	last := UnixHour(w.End) - 1                     // Sunday of W49, 23:00 Berlin
	for _, c := range []struct {
		name  string
		dirty []HourRange
		want  bool
	}{
		{"nothing dirty", nil, true},
		{"an hour before the four weeks", []HourRange{{first - 1, first}}, true},
		{"the first hour of the four weeks", []HourRange{{first, first + 1}}, false},
		{"a late minute in a trend week", []HourRange{{first + 200, first + 201}}, false},
		{"the week's last hour", []HourRange{{last, last + 1}}, false},
		{"after the week", []HourRange{{last + 1, last + 3}}, true},
		{"a range across the week's end", []HourRange{{last, last + 5}}, false},
		{"one range out, one in", []HourRange{{first - 9, first - 2}, {last, last + 1}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := TrendFromSnapshots(w, c.dirty); got != c.want {
				t.Errorf("TrendFromSnapshots(%v) = %v, want %v", c.dirty, got, c.want)
			}
		})
	}
}
