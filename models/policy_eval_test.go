package models_test

import (
	"testing"

	"github.com/gpubook/gpubook/models"
)

// 2026-03-02 is a Monday.
func TestEvaluateEachLimit(t *testing.T) {
	runBreachCases(t, []breachCase{
		{name: "inside default policy", now: "2026-03-02 08:00", start: "2026-03-02 10:00", end: "2026-03-02 12:00", gpus: 4},
		{name: "max gpus counts other bookings held at once", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 12:00", gpus: 2,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpus", "", 4)},
			held:   []models.Booking{booking(1, shanghai, "2026-03-07 09:00", "2026-03-07 11:00", 2), booking(2, shanghai, "2026-03-07 11:00", "2026-03-07 13:00", 1), booking(3, shanghai, "2026-03-07 10:30", "2026-03-07 10:45", 1)},
			want:   map[string][2]int64{"max_gpus": {4, 5}}, source: map[string]string{"max_gpus": "global"}},
		{name: "max gpus: touching bookings do not add up", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 12:00", gpus: 2,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpus", "", 4)},
			held:   []models.Booking{booking(1, shanghai, "2026-03-07 08:00", "2026-03-07 10:00", 4), booking(2, shanghai, "2026-03-07 11:00", "2026-03-07 13:00", 2)}},
		{name: "cancelled and other bookings do not count", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 12:00", gpus: 4,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpus", "", 4)},
			held:   []models.Booking{{ID: 1, UserID: 7, GPUIDs: gpus(2), StartsAt: at(shanghai, "2026-03-07 10:00"), EndsAt: at(shanghai, "2026-03-07 12:00"), Status: models.StatusCancelled}, {ID: 2, UserID: 8, GPUIDs: gpus(2), StartsAt: at(shanghai, "2026-03-07 10:00"), EndsAt: at(shanghai, "2026-03-07 12:00"), Status: models.StatusConfirmed}}},
		{name: "max length", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-08 10:00", gpus: 1,
			limits: []models.PolicyLimit{lim("team", 3, "max_length", "", 12*60)},
			want:   map[string][2]int64{"max_length": {720, 1440}}, source: map[string]string{"max_length": "team"}},
		{name: "max ahead", now: "2026-03-02 08:00", start: "2026-03-12 10:00", end: "2026-03-12 11:00", gpus: 1,
			limits: []models.PolicyLimit{lim("global", 0, "max_ahead", "", 7*1440)},
			want:   map[string][2]int64{"max_ahead": {7 * 1440, 10*1440 + 120}}},
		{name: "max ahead: exactly the limit is allowed", now: "2026-03-02 08:00", start: "2026-03-09 08:00", end: "2026-03-09 09:00", gpus: 1,
			limits: []models.PolicyLimit{lim("global", 0, "max_ahead", "", 7*1440)}},
		{name: "max ahead: a minute past the limit", now: "2026-03-02 08:00", start: "2026-03-09 08:01", end: "2026-03-09 09:00", gpus: 1,
			limits: []models.PolicyLimit{lim("global", 0, "max_ahead", "", 7*1440)},
			want:   map[string][2]int64{"max_ahead": {7 * 1440, 7*1440 + 1}}},
		{name: "min notice", now: "2026-03-02 08:00", start: "2026-03-02 08:30", end: "2026-03-02 09:00", gpus: 1,
			limits: []models.PolicyLimit{lim("user", 7, "min_notice", "", 60)},
			want:   map[string][2]int64{"min_notice": {60, 30}}, source: map[string]string{"min_notice": "user"}},
		{name: "gpu hours per week", now: "2026-03-02 08:00", start: "2026-03-04 10:00", end: "2026-03-04 14:00", gpus: 2,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpu_hours_week", "", 10*60)},
			held:   []models.Booking{booking(1, shanghai, "2026-03-02 09:00", "2026-03-02 12:00", 1), booking(2, shanghai, "2026-02-28 09:00", "2026-02-28 23:00", 4)},
			want:   map[string][2]int64{"max_gpu_hours_week": {600, 660}}},
		{name: "model restricted to other teams", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 11:00", gpus: 1,
			edit: func(in *models.PolicyInput) {
				in.ModelTeams = map[string][]int64{"H100": {4, 5}, "A100": {3}}
				in.GPUModels = []string{"H100"}
			},
			want: map[string][2]int64{"model.H100": {0, 0}}},
		{name: "model allowed to my team", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 11:00", gpus: 1,
			edit: func(in *models.PolicyInput) {
				in.ModelTeams = map[string][]int64{"A100": {3}}
				in.GPUModels = []string{"A100", "A100"}
			}},
		{name: "admins are not exempt by default", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 11:00", gpus: 3,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpus", "", 2)},
			edit:   func(in *models.PolicyInput) { in.IsAdmin = true },
			want:   map[string][2]int64{"max_gpus": {2, 3}}},
		{name: "admins exempt when turned on", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 11:00", gpus: 3,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpus", "", 2)},
			edit:   func(in *models.PolicyInput) { in.IsAdmin, in.Settings.AdminExempt = true, true }},
		{name: "an extension skips the start rules and itself", now: "2026-03-02 08:00", start: "2026-03-02 07:00", end: "2026-03-02 10:00", gpus: 2,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpus", "", 2), lim("global", 0, "min_notice", "", 60)},
			held:   []models.Booking{booking(9, shanghai, "2026-03-02 07:00", "2026-03-02 09:00", 2)},
			edit:   func(in *models.PolicyInput) { in.Extending, in.ExceptBooking = true, 9 }},
		{name: "several rules at once", now: "2026-03-02 08:00", start: "2026-03-02 08:10", end: "2026-03-03 08:10", gpus: 3,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpus", "", 2), lim("global", 0, "max_length", "", 60), lim("global", 0, "min_notice", "", 30)},
			want:   map[string][2]int64{"max_gpus": {2, 3}, "max_length": {60, 1440}, "min_notice": {30, 10}}},
	})
}

func TestEvaluatePeakSplit(t *testing.T) {
	peak := []models.PolicyLimit{lim("global", 0, "max_gpus", "peak", 2), lim("global", 0, "max_length", "peak", 4*60),
		lim("global", 0, "max_gpus", "offpeak", 8), lim("global", 0, "max_length", "offpeak", 48*60)}
	runBreachCases(t, []breachCase{
		{name: "evening booking: peak part short enough", now: "2026-03-02 08:00", start: "2026-03-02 17:00", end: "2026-03-02 23:00", gpus: 2, limits: peak},
		{name: "long day booking breaks peak length", now: "2026-03-02 08:00", start: "2026-03-02 09:00", end: "2026-03-02 15:00", gpus: 1, limits: peak,
			want: map[string][2]int64{"max_length.peak": {240, 360}}},
		{name: "4 gpus spanning into peak: only the peak part breaks", now: "2026-03-02 08:00", start: "2026-03-02 18:00", end: "2026-03-02 22:00", gpus: 4, limits: peak,
			want: map[string][2]int64{"max_gpus.peak": {2, 4}}},
		{name: "weekend is off-peak", now: "2026-03-02 08:00", start: "2026-03-07 09:00", end: "2026-03-08 19:00", gpus: 8, limits: peak},
		{name: "weekend over the off-peak length", now: "2026-03-02 08:00", start: "2026-03-06 19:00", end: "2026-03-09 08:00", gpus: 8, limits: peak,
			want: map[string][2]int64{"max_length.offpeak": {2880, 61 * 60}}},
		{name: "night across two peak windows, each part short", now: "2026-03-02 08:00", start: "2026-03-02 16:00", end: "2026-03-03 12:00", gpus: 2, limits: peak},
		{name: "9 gpus at night breaks off-peak", now: "2026-03-02 08:00", start: "2026-03-02 20:00", end: "2026-03-02 22:00", gpus: 9, limits: peak,
			want: map[string][2]int64{"max_gpus.offpeak": {8, 9}}},
		{name: "peak disabled: no peak part", now: "2026-03-02 08:00", start: "2026-03-02 09:00", end: "2026-03-02 15:00", gpus: 4, limits: peak,
			edit: func(in *models.PolicyInput) { in.Settings.Peak.Enabled = false }},
		{name: "user's own peak limit beats global", now: "2026-03-02 08:00", start: "2026-03-02 10:00", end: "2026-03-02 12:00", gpus: 4,
			limits: append([]models.PolicyLimit{lim("user", 7, "max_gpus", "peak", 4)}, peak...)},
	})
}

func TestEvaluateWeekBoundaries(t *testing.T) {
	weekly := []models.PolicyLimit{lim("global", 0, "max_gpu_hours_week", "", 10*60)}
	runBreachCases(t, []breachCase{
		// Shanghai: Monday 00:00 local is Sunday 16:00 UTC.
		{name: "shanghai: night across Monday counts in two weeks", now: "2026-03-01 08:00", start: "2026-03-01 20:00", end: "2026-03-02 04:00", gpus: 1, limits: weekly,
			held: []models.Booking{booking(1, shanghai, "2026-02-28 10:00", "2026-02-28 17:00", 1), booking(2, shanghai, "2026-03-02 05:00", "2026-03-02 11:00", 1)},
			want: map[string][2]int64{"max_gpu_hours_week": {600, 660}}},
		{name: "shanghai: exactly at the limit is fine", now: "2026-03-01 08:00", start: "2026-03-01 21:00", end: "2026-03-02 04:00", gpus: 1, limits: weekly,
			held: []models.Booking{booking(1, shanghai, "2026-02-28 10:00", "2026-02-28 17:00", 1), booking(2, shanghai, "2026-03-02 05:00", "2026-03-02 11:00", 1)}},
		// Berlin: summer time starts on Sunday 2026-03-29, so that week has 167 hours.
		{name: "berlin: DST week has 167 hours", loc: berlin, now: "2026-03-22 08:00", start: "2026-03-23 00:00", end: "2026-03-30 00:00", gpus: 1,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpu_hours_week", "", 167*60)}},
		{name: "berlin: DST week over 166 hours", loc: berlin, now: "2026-03-22 08:00", start: "2026-03-23 00:00", end: "2026-03-30 00:00", gpus: 1,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpu_hours_week", "", 166*60)},
			want:   map[string][2]int64{"max_gpu_hours_week": {166 * 60, 167 * 60}}},
		{name: "berlin: autumn week has 169 hours", loc: berlin, now: "2026-10-18 08:00", start: "2026-10-19 00:00", end: "2026-10-26 00:00", gpus: 1,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpu_hours_week", "", 168*60)},
			want:   map[string][2]int64{"max_gpu_hours_week": {168 * 60, 169 * 60}}},
		{name: "berlin: peak stays 09-19 local on the first summer-time Monday", loc: berlin, now: "2026-03-29 08:00", start: "2026-03-30 08:00", end: "2026-03-30 09:00", gpus: 4,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpus", "peak", 2)}},
	})
}

func TestEvaluateLending(t *testing.T) {
	weekly := []models.PolicyLimit{lim("global", 0, "max_gpu_hours_week", "", 10*60)}
	ws := at(shanghai, "2026-03-02 00:00")
	other := at(shanghai, "2026-03-09 00:00")
	runBreachCases(t, []breachCase{
		{name: "lent hours are gone", now: "2026-03-02 08:00", start: "2026-03-03 10:00", end: "2026-03-03 17:00", gpus: 1, limits: weekly,
			loans: []models.QuotaLoan{{WeekStart: ws, FromUser: ptr(7), ToUser: ptr(8), GPUMinutes: 4 * 60}},
			want:  map[string][2]int64{"max_gpu_hours_week": {6 * 60, 7 * 60}}},
		{name: "borrowed and drawn hours add up", now: "2026-03-02 08:00", start: "2026-03-03 10:00", end: "2026-03-03 23:00", gpus: 1, limits: weekly,
			loans: []models.QuotaLoan{{WeekStart: ws, FromUser: ptr(8), ToUser: ptr(7), GPUMinutes: 2 * 60}, {WeekStart: ws, ToUser: ptr(7), TeamID: ptr(3), GPUMinutes: 60}, {WeekStart: other, ToUser: ptr(7), TeamID: ptr(3), GPUMinutes: 600}}},
		{name: "loans of another week do not count", now: "2026-03-02 08:00", start: "2026-03-03 10:00", end: "2026-03-03 23:00", gpus: 1, limits: weekly,
			loans: []models.QuotaLoan{{WeekStart: other, ToUser: ptr(7), TeamID: ptr(3), GPUMinutes: 600}},
			want:  map[string][2]int64{"max_gpu_hours_week": {600, 780}}},
	})
}

func TestNeedsUsage(t *testing.T) {
	cases := []struct {
		name   string
		limits []models.PolicyLimit
		exempt bool
		want   bool
	}{
		{name: "default policy", want: false},
		{name: "length and timing only", limits: []models.PolicyLimit{lim("global", 0, "max_length", "", 60), lim("global", 0, "min_notice", "", 30)}, want: false},
		{name: "max gpus at peak", limits: []models.PolicyLimit{lim("team", 3, "max_gpus", "peak", 2)}, want: true},
		{name: "weekly gpu hours", limits: []models.PolicyLimit{lim("user", 7, "max_gpu_hours_week", "", 600)}, want: true},
		{name: "another team's max gpus", limits: []models.PolicyLimit{lim("team", 99, "max_gpus", "", 2)}, want: false},
		{name: "exempt admin", limits: []models.PolicyLimit{lim("global", 0, "max_gpus", "", 2)}, exempt: true, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput(shanghai, tc.limits...)
			if tc.exempt {
				in.IsAdmin, in.Settings.AdminExempt = true, true
			}
			if got := in.NeedsUsage(); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
