package models

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldEmail is the first step of NormalizeEmail: Unicode compatibility
// composition (NFKC), so that fullwidth ａ, mathematical 𝐚 and the like
// become the a they display as, and one look is one address.
func foldEmail(s string) string { return norm.NFKC.String(s) }

// LookalikeEmail reports whether a (normalised) address could pass for
// another one on a page: it holds a character that displays as nothing
// (zero-width space, soft hyphen, word joiner, a variation selector, a
// Hangul filler) or mixes writing systems within its local part or one
// domain label (Latin admin with a Cyrillic і). Scripts that are written
// together (Latin with Han and Japanese kana, Bopomofo or Hangul) are not
// a mix; nor are different scripts in different parts (ivan@пример.рф).
func LookalikeEmail(email string) bool {
	if isASCII(email) {
		return false
	}
	if strings.IndexFunc(email, invisible) >= 0 {
		return true
	}
	for _, part := range strings.FieldsFunc(email, func(r rune) bool { return r == '@' || r == '.' }) {
		if !singleScript(part) {
			return true
		}
	}
	return false
}

// invisible reports whether r displays as nothing or as blank space.
func invisible(r rune) bool {
	return r == utf8.RuneError || r == '\u2800' || unicode.In(r, unicode.Cf, unicode.Zs, unicode.Zl, unicode.Zp,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point, unicode.White_Space)
}

// scriptSets are the scripts one name may mix (Unicode TS #39's "highly
// restrictive" level); any single script is fine too.
var scriptSets = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// singleScript reports whether s keeps to one script or one of scriptSets;
// digits, punctuation (Common) and combining marks (Inherited) go with any.
func singleScript(s string) bool {
	seen := map[string]bool{}
	for _, r := range s {
		if sc := scriptOf(r); sc != "" && sc != "Common" && sc != "Inherited" {
			seen[sc] = true
		}
	}
	if len(seen) <= 1 {
		return true
	}
	for _, set := range scriptSets {
		n := 0
		for _, sc := range set {
			if seen[sc] {
				n++
			}
		}
		if n == len(seen) {
			return true
		}
	}
	return false
}

// scriptOf names the Unicode script of r ("" when none is assigned).
func scriptOf(r rune) string {
	if r < utf8.RuneSelf {
		if unicode.IsLetter(r) {
			return "Latin"
		}
		return "Common"
	}
	for name, table := range unicode.Scripts {
		if unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
