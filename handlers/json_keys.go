package handlers

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Keys of the JSON walk: repeated-key detection and naming places for errors.

// seenKey records key in the innermost object and reports whether it was
// there already, compared case-insensitively as encoding/json matches names.
func (w *jsonWalk) seenKey(key keySpan) bool {
	f := &w.stack[len(w.stack)-1]
	kb := w.keyBytes(key)
	if f.set != nil {
		h := w.foldHash(kb)
		if i, ok := f.set[h]; ok {
			if bytes.EqualFold(w.keyBytes(w.keys[i]), kb) || w.scanKeys(f.first, kb) {
				return true
			}
		}
		f.set[h] = int32(len(w.keys))
		w.keys = append(w.keys, key)
		return false
	}
	if w.scanKeys(f.first, kb) {
		return true
	}
	w.keys = append(w.keys, key)
	if n := len(w.keys) - f.first; n > manyKeys {
		f.set = make(map[uint64]int32, 2*n)
		for i := f.first; i < len(w.keys); i++ {
			f.set[w.foldHash(w.keyBytes(w.keys[i]))] = int32(i)
		}
	}
	return false
}

// scanKeys reports whether kb is among the keys from first on.
func (w *jsonWalk) scanKeys(first int, kb []byte) bool {
	for _, k := range w.keys[first:] {
		if bytes.EqualFold(w.keyBytes(k), kb) {
			return true
		}
	}
	return false
}

// jsonPath names the place of a key in the innermost object.
func (w *jsonWalk) jsonPath(key keySpan) string {
	return w.pathOf(w.stack[:len(w.stack)-1], w.keyBytes(key))
}

// pathOf names a place for an error: "records[3].users", then ".key".
func (w *jsonWalk) pathOf(stack []jsonFrame, key []byte) string {
	var b strings.Builder
	for _, f := range stack {
		if f.list {
			b.WriteString("[" + strconv.Itoa(f.n-1) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(keyName(w.keyBytes(f.key)))
	}
	if len(key) > 0 {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(keyName(key))
	}
	return b.String()
}

// keyName is a key for an error, each invalid UTF-8 byte as U+FFFD the way
// encoding/json reads it, cut to 64 characters.
func keyName(k []byte) string {
	s := string(k)
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	return truncateRunes(s, 64)
}
