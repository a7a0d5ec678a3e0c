package models

import "testing"

// TestParseValueUnits: a time limit typed with its unit ("8h") is read, not
// refused; a bare number keeps the rule's display unit; nonsense is refused.
func TestParseValueUnits(t *testing.T) {
	for _, c := range []struct {
		rule, in string
		want     int64
		ok       bool
	}{
		{RuleMaxLength, "8", 480, true},
		{RuleMaxLength, "8h", 480, true},
		{RuleMaxLength, "8 H", 480, true},
		{RuleMaxLength, "1h30m", 90, true},
		{RuleMaxLength, "90 min", 90, true},
		{RuleMaxLength, "1.5 hours", 90, true},
		{RuleMaxLength, "2d", 2880, true},
		{RuleMaxLength, "8 小时", 480, true},
		{RuleMaxLength, "8x", 0, false},
		{RuleMaxLength, "h", 0, false},
		{RuleMaxLength, "-8h", 0, false},
		{RuleMaxLength, "8h h", 0, false},
		{"max_gpus", "8h", 0, false},
	} {
		t.Run(c.rule+" "+c.in, func(t *testing.T) {
			got, set, ok := ParseValue(c.rule, c.in)
			if got != c.want || ok != c.ok || !set {
				t.Errorf("ParseValue(%q, %q) = %d, %v, %v; want %d, true, %v", c.rule, c.in, got, set, ok, c.want, c.ok)
			}
		})
	}
}
