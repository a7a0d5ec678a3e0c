package models_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

func TestPeakSpansIn(t *testing.T) {
	load := func(name string) *time.Location {
		l, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	shanghai, berlin, newYork := load("Asia/Shanghai"), load("Europe/Berlin"), load("America/New_York")
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	sunToThu := []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday}
	peak := models.DefaultPeakSchedule() // Mon–Fri 09:00–19:00
	tests := []struct {
		name string
		s    models.PeakSchedule
		ws   time.Time
		zone *time.Location
		want []models.PeakSpan
	}{
		{"same zone", peak, time.Date(2026, 11, 30, 0, 0, 0, 0, shanghai), shanghai,
			[]models.PeakSpan{{Days: weekdays, From: 9 * 60, To: 19 * 60}}},
		{"Berlin in winter reads Shanghai's peak 7 hours earlier", peak, time.Date(2026, 11, 30, 0, 0, 0, 0, shanghai), berlin,
			[]models.PeakSpan{{Days: weekdays, From: 2 * 60, To: 12 * 60}}},
		{"New York: the evening before, into the next day", peak, time.Date(2026, 11, 30, 0, 0, 0, 0, shanghai), newYork,
			[]models.PeakSpan{{Days: sunToThu, From: 20 * 60, To: 6 * 60}}},
		{"the week before Berlin's clocks go back: summer time", peak, time.Date(2026, 10, 19, 0, 0, 0, 0, shanghai), berlin,
			// 25 October 2026, a Sunday: the last Monday–Friday before it are
			// summer time (UTC+2), so all five read 03:00–13:00.
			[]models.PeakSpan{{Days: weekdays, From: 3 * 60, To: 13 * 60}}},
		{"a week that straddles the change", models.PeakSchedule{Enabled: true, Days: [7]bool{time.Saturday: true, time.Sunday: true}, From: 9 * 60, To: 19 * 60},
			time.Date(2026, 10, 19, 0, 0, 0, 0, shanghai), berlin,
			[]models.PeakSpan{{Days: []time.Weekday{time.Saturday}, From: 3 * 60, To: 13 * 60}, {Days: []time.Weekday{time.Sunday}, From: 2 * 60, To: 12 * 60}}},
		{"ends at midnight", models.PeakSchedule{Enabled: true, Days: [7]bool{time.Monday: true}, From: 18 * 60, To: 24 * 60},
			time.Date(2026, 11, 30, 0, 0, 0, 0, berlin), berlin,
			[]models.PeakSpan{{Days: []time.Weekday{time.Monday}, From: 18 * 60, To: 24 * 60}}},
		{"off", models.PeakSchedule{Days: [7]bool{time.Monday: true}, From: 9 * 60, To: 19 * 60}, time.Date(2026, 11, 30, 0, 0, 0, 0, shanghai), berlin, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := models.PeakSpansIn(tt.s, tt.ws, tt.zone)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if (models.PeakSpan{From: 20 * 60, To: 6 * 60}).NextDay() != true || (models.PeakSpan{From: 18 * 60, To: 24 * 60}).NextDay() {
		t.Error("NextDay")
	}
}

func TestZonesDiffer(t *testing.T) {
	utc, _ := time.LoadLocation("Etc/UTC")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	if models.ZonesDiffer(utc, time.UTC, at) {
		t.Error("Etc/UTC and UTC differ")
	}
	if !models.ZonesDiffer(berlin, time.UTC, at) {
		t.Error("Berlin and UTC do not differ")
	}
}
