package handlers

import (
	"strings"
	"testing"
)

// TestCheckJSONKeyBound: an object with more keys than the shape allows is
// refused at the first one too many, named by its place; siblings each
// get the bound of their own.
func TestCheckJSONKeyBound(t *testing.T) {
	shape := jsonShape{maxDepth: 5, otherLists: 4, maxKeys: 3}
	tests := []struct {
		name  string
		body  string
		fault jsonFault
		field string
	}{
		{"at the bound", `{"a":1,"b":2,"c":3}`, 0, ""},
		{"over it", `{"a":1,"b":2,"c":3,"d":4}`, faultKeys, ""},
		{"over it deep", `{"r":[{"a":1},{"a":1,"b":2,"c":3,"d":4}]}`, faultKeys, "r[1]"},
		{"siblings each at the bound", `{"r":[{"a":1,"b":2,"c":3},{"a":1,"b":2,"c":3}]}`, 0, ""},
		{"nested keys are their own", `{"a":{"x":1,"y":2,"z":3},"b":2,"c":3}`, 0, ""},
		{"many unknown keys", `{` + keysBody(5000) + `}`, faultKeys, ""},
		{"unbounded shape", `{"a":1,"b":2,"c":3,"d":4}`, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := shape
			if strings.HasPrefix(tt.name, "unbounded") {
				s.maxKeys = 0
			}
			p := checkJSON([]byte(tt.body), s)
			var fault jsonFault
			var field string
			if p != nil {
				fault, field = p.fault, p.field
			}
			if fault != tt.fault || field != tt.field {
				t.Errorf("got fault %d at %q, want %d at %q", fault, field, tt.fault, tt.field)
			}
			if p != nil && p.fault == faultKeys && p.max != 3 {
				t.Errorf("max = %d, want 3", p.max)
			}
		})
	}
}
