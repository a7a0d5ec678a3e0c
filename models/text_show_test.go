package models

import "testing"

func TestShowText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "Ada Lovelace", "Ada Lovelace"},
		{"Chinese", "张伟 <zhang@example.org>", "张伟 <zhang@example.org>"},
		{"escape sequence", "a\x1b[2Kb", `a\x1b[2Kb`},
		{"OSC title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"line breaks fake rows", "ok\n42  node-a\r\tx", `ok\n42  node-a\r\tx`},
		{"NUL and DEL", "a\x00\x7f", `a\x00\x7f`},
		{"C1 NEL and CSI", "a\u0085b\u009bc", `a\u0085b\u009bc`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`},
		{"isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"invalid UTF-8", "a\xff\xfeb", `a\xff\xfeb`},
		{"backslash stays", `C:\x`, `C:\x`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShowText(tt.in); got != tt.want {
				t.Errorf("ShowText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
