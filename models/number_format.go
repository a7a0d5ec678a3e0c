package models

import (
	"math"
	"strconv"
)

// FormatHours writes an amount of hours or GPU-hours for people: at most
// two decimals and no trailing zeros ("36.02", "1.5", "40"), so that no
// page, mail or CLI line shows 36.016666666666666. Every GPU-hour figure
// outside the report tables (which align one fixed decimal) goes through
// it; the unit is the sentence's to say.
func FormatHours(h float64) string {
	if math.IsNaN(h) || math.IsInf(h, 0) {
		return "0"
	}
	r := math.Round(h*100) / 100
	if r == 0 { // also -0
		return "0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// FormatMinutesAsHours is FormatHours of a number of minutes, the unit in
// which quotas and loans are stored.
func FormatMinutesAsHours(min int64) string { return FormatHours(float64(min) / 60) }
