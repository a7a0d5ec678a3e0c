package main

import (
	"strings"
	"testing"
	"time"
)

// TestChargeRulesFromEnv: the charge settings, their defaults, and the
// values refused at start-up (an idle weight below the unbooked weight
// would make hoarding cheaper than unbooked use again).
func TestChargeRulesFromEnv(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		env       map[string]string
		idle, pct float64
		lead      time.Duration
	}{
		{"defaults", nil, 2, 10, 2 * time.Hour},
		{"unbooked weight 3 lifts the idle weight", map[string]string{"GPUBOOK_REPORT_UNBOOKED_WEIGHT": "3"}, 3, 10, 2 * time.Hour},
		{"set", map[string]string{"GPUBOOK_REPORT_IDLE_WEIGHT": "4", "GPUBOOK_REPORT_NO_SHOW_PCT": "25", "GPUBOOK_REPORT_LATE_CANCEL": "30m"},
			4, 25, 30 * time.Minute},
		{"equal to the unbooked weight", map[string]string{"GPUBOOK_REPORT_IDLE_WEIGHT": "1.5"}, 1.5, 10, 2 * time.Hour},
		{"late cancellations off", map[string]string{"GPUBOOK_REPORT_LATE_CANCEL": "0"}, 2, 10, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := reportRules(envOf(tt.env))
			if err != nil || r.IdleWeight != tt.idle || r.NoShowPct != tt.pct || r.LateCancelLead() != tt.lead {
				t.Errorf("got idle %v, no-show %v %%, lead %v, %v; want %v, %v, %v", r.IdleWeight, r.NoShowPct, r.LateCancelLead(), err,
					tt.idle, tt.pct, tt.lead)
			}
		})
	}
	for _, env := range []map[string]string{
		{"GPUBOOK_REPORT_IDLE_WEIGHT": "1.2"},
		{"GPUBOOK_REPORT_IDLE_WEIGHT": "2", "GPUBOOK_REPORT_UNBOOKED_WEIGHT": "3"},
		{"GPUBOOK_REPORT_IDLE_WEIGHT": "x"},
		{"GPUBOOK_REPORT_NO_SHOW_PCT": "0"},
		{"GPUBOOK_REPORT_NO_SHOW_PCT": "101"},
		{"GPUBOOK_REPORT_LATE_CANCEL": "2"},
		{"GPUBOOK_REPORT_LATE_CANCEL": "-1h"},
		{"GPUBOOK_REPORT_LATE_CANCEL": "200h"},
	} {
		_, err := reportRules(envOf(env))
		for k := range env {
			if k != "GPUBOOK_REPORT_UNBOOKED_WEIGHT" && (err == nil || !strings.Contains(err.Error(), k)) {
				t.Errorf("%v: %v, want an error naming %s", env, err, k)
			}
		}
	}
}
