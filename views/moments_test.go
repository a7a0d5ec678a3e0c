package views

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/views/i18n"
)

func TestRangeLabel(t *testing.T) {
	day := func(t time.Time) string { return t.Format("Mon 2 Jan") }
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name, start, stop, want string
	}{
		{"within a day", "2026-12-07 09:00", "2026-12-07 17:00", "Mon 7 Dec 09:00–17:00"},
		{"24 hours from midnight", "2026-12-07 00:00", "2026-12-08 00:00", "Mon 7 Dec 00:00–Tue 8 Dec 00:00"},
		{"overnight", "2026-12-07 22:00", "2026-12-08 06:00", "Mon 7 Dec 22:00–Tue 8 Dec 06:00"},
		{"same weekday a year on", "2026-12-07 09:00", "2027-12-07 09:00", "Mon 7 Dec 09:00–Tue 7 Dec 09:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RangeLabel(at(tt.start), at(tt.stop), day); got != tt.want {
				t.Errorf("RangeLabel = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAt(t *testing.T) {
	b := i18n.MustLoad()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 6, 17, 22, 0, 0, time.UTC) // Sunday 18:22 in Berlin
	tests := []struct {
		name, lang string
		at         time.Time
		want       string
	}{
		{"today", "en", time.Date(2026, 12, 6, 21, 0, 0, 0, time.UTC), "today 22:00"},
		{"today by the viewer's zone, tomorrow in UTC", "en", time.Date(2026, 12, 6, 23, 30, 0, 0, time.UTC), "tomorrow 00:30"},
		{"tomorrow", "zh-CN", time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC), "明天 09:00"},
		{"yesterday", "en", time.Date(2026, 12, 5, 21, 10, 0, 0, time.UTC), "yesterday 22:10"},
		{"the issue's Tuesday", "en", time.Date(2026, 12, 8, 16, 0, 0, 0, time.UTC), "Tue 8 Dec 17:00"},
		{"the issue's Tuesday in Chinese", "zh-CN", time.Date(2026, 12, 8, 16, 0, 0, 0, time.UTC), "12月8日 周二 17:00"},
		{"next year", "en", time.Date(2027, 1, 4, 8, 0, 0, 0, time.UTC), "Mon 4 Jan 2027 09:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Page{T: b.For(tt.lang), Location: berlin, Now: now}
			if got := p.At(tt.at); got != tt.want {
				t.Errorf("At = %q, want %q", got, tt.want)
			}
		})
	}
	p := &Page{T: b.For("en"), Location: berlin, Now: now}
	if got, want := p.Until(now, now.Add(time.Hour)), "19:22"; got != want {
		t.Errorf("Until same day = %q, want %q", got, want)
	}
	if got, want := p.Until(now, now.Add(24*time.Hour)), "2026-12-07 18:22 CET"; got != want {
		t.Errorf("Until next day = %q, want %q", got, want)
	}
	if got := DayOffset(now, now.AddDate(0, 0, 3), berlin); got != 3 {
		t.Errorf("DayOffset 3 days on = %d", got)
	}
}
