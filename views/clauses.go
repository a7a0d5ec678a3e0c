package views

import (
	"unicode"
	"unicode/utf8"
)

// joinClauses joins two translated pieces of one sentence: with a space in
// English ("A100: 4 free" "for a day."), without one before Chinese text
// or its full-width punctuation ("空闲 4 块" "，一天以上…"), which a space
// would split.
func joinClauses(a, b string) string {
	r, _ := utf8.DecodeRuneInString(b)
	if b == "" || a == "" || unicode.Is(unicode.Han, r) || (r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF) {
		return a + b
	}
	return a + " " + b
}
