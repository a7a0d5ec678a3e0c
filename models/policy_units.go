package models

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// minuteUnits are the unit words a time-valued limit may be typed with, in
// minutes: an admin writes "8h" for "length of one booking" as often as "8".
var minuteUnits = map[string]float64{
	"m": 1, "min": 1, "mins": 1, "minute": 1, "minutes": 1, "分": 1, "分钟": 1,
	"h": 60, "hr": 60, "hrs": 60, "hour": 60, "hours": 60, "小时": 60, "时": 60,
	"d": 1440, "day": 1440, "days": 1440, "天": 1440,
}

// parseMinutesText reads a duration written with units ("8h", "1h30m",
// "90 min", "2 days", "8 小时") as minutes. isDuration is false when s is
// no such text (a bare number, or words it does not know), so that the
// caller reads it in the rule's own unit or refuses it.
func parseMinutesText(s string) (minutes float64, isDuration bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || !strings.ContainsFunc(s, unicode.IsLetter) {
		return 0, false
	}
	total, parts := 0.0, 0
	for s != "" {
		s = strings.TrimSpace(s)
		n := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
		if n <= 0 {
			return 0, false
		}
		f, err := strconv.ParseFloat(s[:n], 64)
		if err != nil || math.IsNaN(f) {
			return 0, false
		}
		s = strings.TrimSpace(s[n:])
		u := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' || r == '.' || unicode.IsSpace(r) })
		if u < 0 {
			u = len(s)
		}
		per, ok := minuteUnits[s[:u]]
		if !ok {
			return 0, false
		}
		total += f * per
		parts++
		s = s[u:]
	}
	return total, parts > 0
}
