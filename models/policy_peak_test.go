package models_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

func TestSplitPeak(t *testing.T) {
	s := models.DefaultPeakSchedule()
	got := models.SplitPeak(at(shanghai, "2026-03-06 18:00"), at(shanghai, "2026-03-09 10:00"), s, shanghai)
	want := []models.PeakPart{
		{Start: at(shanghai, "2026-03-06 18:00"), End: at(shanghai, "2026-03-06 19:00"), Period: "peak"},
		{Start: at(shanghai, "2026-03-06 19:00"), End: at(shanghai, "2026-03-09 09:00"), Period: "offpeak"},
		{Start: at(shanghai, "2026-03-09 09:00"), End: at(shanghai, "2026-03-09 10:00"), Period: "peak"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].Start.Equal(want[i].Start) || !got[i].End.Equal(want[i].End) || got[i].Period != want[i].Period {
			t.Errorf("part %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if !s.IsPeak(at(berlin, "2026-03-30 09:00"), berlin) || s.IsPeak(at(berlin, "2026-03-30 08:59"), berlin) || s.IsPeak(at(berlin, "2026-03-28 12:00"), berlin) {
		t.Error("IsPeak wrong around the DST Monday or on a Saturday")
	}
}

func TestPeakScheduleText(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want string
	}{
		{"1,2,3,4,5 09:00-19:00", true, "1,2,3,4,5 09:00-19:00"},
		{"off 0,6 00:00-24:00", true, "off 0,6 00:00-24:00"},
		{"1 19:00-09:00", false, ""},
		{"7 09:00-10:00", false, ""},
		{"garbage", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, ok := models.ParsePeakSchedule(tt.in)
			if ok != tt.ok || ok && s.String() != tt.want {
				t.Errorf("got %q ok=%v, want %q ok=%v", s.String(), ok, tt.want, tt.ok)
			}
		})
	}
	if got := models.DefaultPeakSchedule().String(); got != "1,2,3,4,5 09:00-19:00" {
		t.Errorf("default: %q", got)
	}
}

func TestWeekStart(t *testing.T) {
	tests := []struct {
		loc  *time.Location
		in   string
		want string
	}{
		{shanghai, "2026-03-01 23:59", "2026-02-23 00:00"},
		{shanghai, "2026-03-02 00:00", "2026-03-02 00:00"},
		{berlin, "2026-03-29 12:00", "2026-03-23 00:00"},
		{berlin, "2026-03-30 00:30", "2026-03-30 00:00"},
	}
	for _, tt := range tests {
		got := models.WeekStart(at(tt.loc, tt.in), tt.loc)
		if !got.Equal(at(tt.loc, tt.want)) {
			t.Errorf("WeekStart(%s %s) = %v, want %s", tt.in, tt.loc, got, tt.want)
		}
	}
	if h := models.NextWeek(at(berlin, "2026-03-23 00:00")).Sub(at(berlin, "2026-03-23 00:00")); h != 167*time.Hour {
		t.Errorf("DST week lasts %v", h)
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		rule, in    string
		want        int64
		set, wantOK bool
	}{
		{"max_gpus", "4", 4, true, true},
		{"max_gpus", "1.5", 0, true, false},
		{"max_length", "1.5", 90, true, true},
		{"max_ahead", "7", 7 * 1440, true, true},
		{"max_gpu_hours_week", "", 0, false, true},
		{"max_gpus", "-1", 0, true, false},
		{"nope", "1", 0, true, false},
		{"max_length", "NaN", 0, true, false},
		{"max_length", "Inf", 0, true, false},
	}
	for _, tt := range tests {
		v, set, ok := models.ParseValue(tt.rule, tt.in)
		if v != tt.want || set != tt.set || ok != tt.wantOK {
			t.Errorf("ParseValue(%s, %q) = %d %v %v, want %d %v %v", tt.rule, tt.in, v, set, ok, tt.want, tt.set, tt.wantOK)
		}
	}
	if got := models.FormatValue("max_length", 90); got != "1.5" {
		t.Errorf("FormatValue = %q", got)
	}
}
