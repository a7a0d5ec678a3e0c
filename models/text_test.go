package models

import (
	"strings"
	"testing"
)

func TestTextRuleClean(t *testing.T) {
	line, lines := TextRule{Max: 5}, TextRule{Max: 5, Multiline: true}
	tests := []struct {
		name    string
		rule    TextRule
		in      string
		want    string
		wantKey string // "" when the text is accepted
	}{
		{"trimmed", line, "  abc \t", "abc", ""},
		{"empty", line, "   ", "", ""},
		{"max counts characters, not bytes", line, "界界界界界", "界界界界界", ""},
		{"one over", line, "界界界界界界", "", "err.too_long"},
		{"NUL", line, "a\x00b", "", "err.text_control"},
		{"NUL in multiline", lines, "a\x00b", "", "err.text_control"},
		{"LF in one line", line, "a\nb", "", "err.text_control"},
		{"CR in one line", line, "a\rb", "", "err.text_control"},
		{"tab in one line", line, "a\tb", "", "err.text_control"},
		{"LF and tab in multiline", lines, "a\n\tb", "a\n\tb", ""},
		{"CR LF becomes LF", lines, "a\r\nb", "a\nb", ""},
		{"lone CR in multiline", lines, "a\rb", "", "err.text_control"},
		{"escape", lines, "a\x1bb", "", "err.text_control"},
		{"DEL", line, "a\x7f", "", "err.text_control"},
		{"C1 control", line, "a\u0085b", "", "err.text_control"},
		{"invalid UTF-8", line, "a\xffb", "", "err.text_invalid"},
		{"no limit", TextRule{}, strings.Repeat("x", 10000), strings.Repeat("x", 10000), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := tt.rule.Clean(tt.in)
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

func TestFieldErrorsCheck(t *testing.T) {
	fe := FieldErrors{}
	good, bad := " ok ", "x\x00"
	if !fe.Check("good", &good, NameText) || good != "ok" {
		t.Errorf("good = %q", good)
	}
	if fe.Check("bad", &bad, NameText) || bad != "x\x00" || fe["bad"].Key != "err.text_control" || len(fe) != 1 {
		t.Errorf("bad = %q, errors %v", bad, fe)
	}
}

func TestTextRuleSquash(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "Ann Lee", "Ann Lee"},
		{"controls become one space", "Ann\r\n\x00Lee", "Ann Lee"},
		{"invalid UTF-8 goes", "A\xffnn", "Ann"},
		{"cut at a character", strings.Repeat("界", 201), strings.Repeat("界", 200)},
		{"no trailing space after the cut", strings.Repeat("a", 199) + " b", strings.Repeat("a", 199)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NameText.Squash(tt.in); got != tt.want {
				t.Errorf("Squash(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestValidEmail(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"a@b.org", true},
		{"", false},
		{"not an email", false},
		{"Ann <a@b.org>", false},
		{"a@b.org\r\nbcc: c@d.org", false},
		{"a\x00@b.org", false},
		{strings.Repeat("a", 250) + "@b.org", false},
	}
	for _, tt := range tests {
		if got := ValidEmail(tt.in); got != tt.want {
			t.Errorf("ValidEmail(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
