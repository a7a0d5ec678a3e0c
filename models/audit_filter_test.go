package models

import (
	"strings"
	"testing"
)

func TestAuditFilterText(t *testing.T) {
	tests := []struct {
		name, in, want, wantKey string
	}{
		{"a target type", " booking ", "booking", ""},
		{"an email", "ann@example.org", "ann@example.org", ""},
		{"NUL", "\x00", "", "err.text_control"},
		{"invalid UTF-8", "\xff", "", "err.text_invalid"},
		{"escape", "a\x1b[31m", "", "err.text_control"},
		{"line feed", "a\nb", "", "err.text_control"},
		{"C1", "a\u0085b", "", "err.text_control"},
		{"too long", strings.Repeat("x", 255), "", "err.too_long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := AuditFilterText.Clean(tt.in)
			key := ""
			if msg != nil {
				key = msg.Key
			}
			if got != tt.want || key != tt.wantKey {
				t.Errorf("Clean(%q) = %q, %q; want %q, %q", tt.in, got, key, tt.want, tt.wantKey)
			}
		})
	}
}
