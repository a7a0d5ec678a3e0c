package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gpubook/gpubook/models"
)

// chargeRules reads the fair-share charge settings into r, after the
// unbooked weight: GPUBOOK_REPORT_IDLE_WEIGHT (what an idle booked
// GPU-hour weighs, at least the unbooked weight; unset, the larger of 2
// and the unbooked weight), GPUBOOK_REPORT_NO_SHOW_PCT (a booking busy
// under this share of its time is a no-show) and GPUBOOK_REPORT_LATE_CANCEL
// (a duration such as "2h"; "0" turns late cancellations off).
// docs/reports.md defines all three.
func chargeRules(getenv func(string) string, r *models.ReportRules) error {
	r.IdleWeight = max(models.DefaultIdleWeight, r.UnbookedWeight)
	if v := getenv("GPUBOOK_REPORT_IDLE_WEIGHT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= r.UnbookedWeight && f <= 100) {
			return fmt.Errorf("GPUBOOK_REPORT_IDLE_WEIGHT: %q is not a weight from GPUBOOK_REPORT_UNBOOKED_WEIGHT (%v) to 100: "+
				"an idle booked hour must weigh at least an hour used without a booking", v, r.UnbookedWeight)
		}
		r.IdleWeight = f
	}
	if v := getenv("GPUBOOK_REPORT_NO_SHOW_PCT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 100) {
			return fmt.Errorf("GPUBOOK_REPORT_NO_SHOW_PCT: %q is not a percentage above 0 and at most 100", v)
		}
		r.NoShowPct = f
	}
	if v := getenv("GPUBOOK_REPORT_LATE_CANCEL"); v != "" {
		d, err := time.ParseDuration(v)
		if v == "0" {
			d, err = -1, nil // off
		}
		if err != nil || d == 0 || d > 7*24*time.Hour || (d < 0 && v != "0") {
			return fmt.Errorf("GPUBOOK_REPORT_LATE_CANCEL: %q is not a duration such as 2h, at most 168h, or 0 for off", v)
		}
		r.LateCancel = d
	}
	return nil
}
