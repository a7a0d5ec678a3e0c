package handlers

import "testing"

func TestCSVCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Alice", "Alice"},
		{"=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"},
		{"+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"a=b", "a=b"},
		{"-1.5", "-1.5"},
		{"+2", "+2"},
		{"-20%", "-20%"},
		{"-Inf", "'-Inf"},
		{"-0x1p-2", "'-0x1p-2"},
		{"-", "'-"},
		{"12.0", "12.0"},
	}
	for _, tt := range tests {
		if got := csvCell(tt.in); got != tt.want {
			t.Errorf("csvCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
