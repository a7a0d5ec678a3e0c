package models

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ShowText makes untrusted text safe to print on one line of a terminal,
// a table cell or a message: control characters (C0, DEL, C1), the bidi
// controls that reorder what follows and bytes that are not UTF-8 become
// visible escapes (\n, \x1b, \u202e, \xff). A name or note from a portal,
// an IdP or an import file then cannot move the cursor, retitle the
// window, fake a line of output or hide part of itself.
func ShowText(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Unprintable(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.IndexFunc(s, Unprintable) >= 0
}

// isBidiControl is the embeddings, overrides, isolates and marks that
// change the order in which the rest of a line is shown.
func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Unprintable reports a character ShowText escapes: a control character
// or a bidi control.
func Unprintable(r rune) bool { return isControl(r) || isBidiControl(r) }
