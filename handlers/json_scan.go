package handlers

import (
	"hash/maphash"
	"unicode"
	"unicode/utf8"
)

// The lexical half of checkJSON: strings, numbers and literals as RFC 8259
// writes them, read in place without building Go values.

// skipSpace moves past JSON white space.
func (w *jsonWalk) skipSpace() {
	for w.pos < len(w.body) {
		switch w.body[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// expect moves past white space and then one of the bytes in want.
func (w *jsonWalk) expect(want ...byte) bool {
	w.skipSpace()
	if w.pos >= len(w.body) {
		return false
	}
	for _, c := range want {
		if w.body[w.pos] == c {
			w.pos++
			return true
		}
	}
	return false
}

// scalar reads a string, number or literal at pos.
func (w *jsonWalk) scalar() bool {
	switch c := w.body[w.pos]; {
	case c == '"':
		_, ok := w.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		return w.number()
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	}
	return false
}

// literal reads true, false or null.
func (w *jsonWalk) literal(lit string) bool {
	if len(w.body)-w.pos < len(lit) || string(w.body[w.pos:w.pos+len(lit)]) != lit {
		return false
	}
	w.pos += len(lit)
	return true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, leaving its
// value alone: 1e999 is valid JSON, refused later by type.
func (w *jsonWalk) number() bool {
	if w.peek() == '-' {
		w.pos++
	}
	switch c := w.peek(); {
	case c == '0':
		w.pos++
	case c >= '1' && c <= '9':
		w.digits()
	default:
		return false
	}
	if w.peek() == '.' {
		w.pos++
		if !w.digits() {
			return false
		}
	}
	if c := w.peek(); c == 'e' || c == 'E' {
		w.pos++
		if c := w.peek(); c == '+' || c == '-' {
			w.pos++
		}
		if !w.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more decimal digits.
func (w *jsonWalk) digits() bool {
	start := w.pos
	for c := w.peek(); c >= '0' && c <= '9'; c = w.peek() {
		w.pos++
	}
	return w.pos > start
}

// peek is the byte at pos, or 0 at the end.
func (w *jsonWalk) peek() byte {
	if w.pos < len(w.body) {
		return w.body[w.pos]
	}
	return 0
}

// key reads an object key: where its text is, unescaped into unq only
// when it holds escapes, so that most keys are compared in the body.
func (w *jsonWalk) key() (keySpan, bool) {
	if w.peek() != '"' {
		return keySpan{}, false
	}
	start := w.pos + 1
	escaped, ok := w.str()
	if !ok {
		return keySpan{}, false
	}
	if !escaped {
		return keySpan{start: start, end: w.pos - 1}, true
	}
	at := len(w.unq)
	w.unq = appendUnescaped(w.unq, w.body[start:w.pos-1])
	return keySpan{start: at, end: len(w.unq), unquoted: true}, true
}

// str reads a string at pos and reports whether it held escapes.
func (w *jsonWalk) str() (escaped, ok bool) {
	w.pos++
	for w.pos < len(w.body) {
		c := w.body[w.pos]
		switch {
		case c == '"':
			w.pos++
			return escaped, true
		case c < 0x20:
			return false, false
		case c == '\\':
			escaped = true
			if !w.escape() {
				return false, false
			}
		default:
			w.pos++
		}
	}
	return false, false
}

// escape reads one backslash escape at pos.
func (w *jsonWalk) escape() bool {
	if w.pos+1 >= len(w.body) {
		return false
	}
	switch w.body[w.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		w.pos += 2
		return true
	case 'u':
		if w.pos+6 > len(w.body) {
			return false
		}
		for _, h := range w.body[w.pos+2 : w.pos+6] {
			if hexVal(h) < 0 {
				return false
			}
		}
		w.pos += 6
		return true
	}
	return false
}

// hexVal is the value of a hexadecimal digit, or -1.
func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// appendUnescaped appends the text of a valid string's inside, as
// encoding/json would unquote it (lone surrogates become U+FFFD).
func appendUnescaped(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			dst = append(dst, s[i])
			i++
			continue
		}
		c := s[i+1]
		i += 2
		switch c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(s[i:])
			i += 4
			if utf16IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 = hex4(s[i+2:])
				}
				if d := utf16Decode(r, r2); d != utf8.RuneError {
					r, i = d, i+6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
	}
	return dst
}

// hex4 is the value of four hexadecimal digits, already checked.
func hex4(s []byte) rune {
	return hexVal(s[0])<<12 | hexVal(s[1])<<8 | hexVal(s[2])<<4 | hexVal(s[3])
}

func utf16IsSurrogate(r rune) bool { return r >= 0xd800 && r < 0xe000 }

// utf16Decode joins a surrogate pair, or returns U+FFFD.
func utf16Decode(r1, r2 rune) rune {
	if r1 >= 0xd800 && r1 < 0xdc00 && r2 >= 0xdc00 && r2 < 0xe000 {
		return (r1-0xd800)<<10 | (r2 - 0xdc00) + 0x10000
	}
	return utf8.RuneError
}

// foldHash hashes a key so that keys bytes.EqualFold calls equal hash
// alike: every rune becomes the least rune of its case-folding orbit.
func (w *jsonWalk) foldHash(k []byte) uint64 {
	w.fold = w.fold[:0]
	for i := 0; i < len(k); {
		c := k[i]
		if c < utf8.RuneSelf {
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			w.fold = append(w.fold, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(k[i:])
		i += n
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		w.fold = utf8.AppendRune(w.fold, least)
	}
	return maphash.Bytes(w.seed, w.fold)
}
