package views

import (
	"testing"
	"time"
)

func TestOfferNextDays(t *testing.T) {
	loc := time.UTC
	sunday := time.Date(2026, 6, 7, 18, 0, 0, 0, loc)
	for _, c := range []struct {
		name string
		v    CalendarView
		now  time.Time
		want bool
	}{
		{"Sunday, this week", CalendarView{View: ViewWeek, Date: sunday}, sunday, true},
		{"Tuesday, this week", CalendarView{View: ViewWeek, Date: sunday}, time.Date(2026, 6, 2, 9, 0, 0, 0, loc), true},
		{"Monday: nothing past", CalendarView{View: ViewWeek, Date: sunday}, time.Date(2026, 6, 1, 9, 0, 0, 0, loc), false},
		{"next week shown", CalendarView{View: ViewWeek, Date: sunday.AddDate(0, 0, 7)}, sunday, false},
		{"already rolling", CalendarView{View: ViewWeek, Date: sunday, Rolling: true}, sunday, false},
		{"day view", CalendarView{View: ViewDay, Date: sunday}, sunday, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.v.OfferNextDays(c.now, loc); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	v := CalendarView{View: ViewWeek, Date: sunday, Rolling: true}
	start, days := v.Range(loc)
	if !start.Equal(time.Date(2026, 6, 7, 0, 0, 0, 0, loc)) || days != 7 {
		t.Errorf("rolling range %v + %d days, want Sunday 7 June + 7", start, days)
	}
	if got, want := v.Next(), "/calendar?date=2026-06-14&days=next"; got != want {
		t.Errorf("next: %q, want %q", got, want)
	}
}
