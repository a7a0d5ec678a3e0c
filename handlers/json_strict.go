package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// The one strict reading of JSON bodies, shared by /api/v1 and the agent
// API. encoding/json alone keeps the last of repeated keys, matches names
// case-insensitively, ignores nothing after a value only when asked, and
// allocates every element of a list before anyone can count them; so each
// body is first walked token by token, once, and refused at the first
// fault, before anything is decoded into a Go value.

// jsonShape bounds a body: how deep it may nest and how long its lists may
// be. lists maps a list's path (object keys joined by ".", list levels left
// out: "records.users") to its most elements; any other list gets
// otherLists, so that no list is unbounded.
type jsonShape struct {
	maxDepth   int
	lists      map[string]int
	otherLists int
}

// jsonFault says what is wrong with a body.
type jsonFault int

const (
	faultSyntax    jsonFault = iota + 1 // not JSON, or cut short
	faultNotObject                      // one value, but not an object
	faultTrailing                       // more after the value
	faultDuplicate                      // a key twice in one object (case-insensitively)
	faultDepth                          // nested deeper than maxDepth
	faultList                           // a list longer than its bound
)

// jsonProblem is the first fault of a body and where it is: the path of
// the repeated key or the long list ("records[3].users"), else "".
type jsonProblem struct {
	fault jsonFault
	field string
	max   int
}

// jsonFrame is one open object or list of the walk.
type jsonFrame struct {
	list    bool
	key     string          // object: the key whose value is being read
	keys    []string        // object: keys seen, while they are few
	set     map[string]bool // object: keys seen (lower case), once many
	wantKey bool            // object: the next token is a key or '}'
	n, max  int             // list: elements so far and the bound
}

// manyKeys is when an object's keys move from a slice to a map, so that an
// object with thousands of keys costs a lookup per key, not a scan.
const manyKeys = 16

// checkJSON walks body and returns its first fault, or nil when it is one
// JSON object within shape followed by nothing but white space.
func checkJSON(body []byte, shape jsonShape) *jsonProblem {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // no number conversion: 1e999 is valid JSON, refused later by type
	var stack []jsonFrame
	for started, done := false, false; ; started = true {
		tok, err := dec.Token()
		switch {
		case done && errors.Is(err, io.EOF):
			return nil
		case done:
			return &jsonProblem{fault: faultTrailing}
		case err != nil:
			return &jsonProblem{fault: faultSyntax}
		case !started && tok != json.Delim('{'):
			return &jsonProblem{fault: faultNotObject}
		}
		if top := len(stack) - 1; top >= 0 && stack[top].wantKey {
			if tok == json.Delim('}') {
				stack = stack[:top]
				done = valueRead(stack)
				continue
			}
			key, _ := tok.(string) // the decoder allows only a string here
			if seenKey(&stack[top], key) {
				return &jsonProblem{fault: faultDuplicate, field: jsonPath(stack, key)}
			}
			stack[top].key, stack[top].wantKey = key, false
			continue
		}
		if tok == json.Delim(']') || tok == json.Delim('}') {
			stack = stack[:len(stack)-1]
			done = valueRead(stack)
			continue
		}
		if p := valueStarts(stack); p != nil {
			return p
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= shape.maxDepth {
				return &jsonProblem{fault: faultDepth, max: shape.maxDepth}
			}
			f := jsonFrame{wantKey: tok == json.Delim('{'), list: tok == json.Delim('[')}
			if f.list {
				f.max = shape.listMax(stack)
			}
			stack = append(stack, f)
		default:
			done = valueRead(stack)
		}
	}
}

// valueStarts counts a new value into the list it is in.
func valueStarts(stack []jsonFrame) *jsonProblem {
	top := len(stack) - 1
	if top < 0 || !stack[top].list {
		return nil
	}
	stack[top].n++
	if stack[top].n > stack[top].max {
		return &jsonProblem{fault: faultList, field: jsonPath(stack[:top], ""), max: stack[top].max}
	}
	return nil
}

// valueRead notes that a value ended; it reports whether it was the body's.
func valueRead(stack []jsonFrame) bool {
	top := len(stack) - 1
	if top < 0 {
		return true
	}
	if !stack[top].list {
		stack[top].wantKey = true
	}
	return false
}

// seenKey records key in f and reports whether it was there already.
func seenKey(f *jsonFrame, key string) bool {
	if f.set != nil {
		k := strings.ToLower(key)
		if f.set[k] {
			return true
		}
		f.set[k] = true
		return false
	}
	for _, k := range f.keys {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	f.keys = append(f.keys, key)
	if len(f.keys) > manyKeys {
		f.set = make(map[string]bool, 2*len(f.keys))
		for _, k := range f.keys {
			f.set[strings.ToLower(k)] = true
		}
		f.keys = nil
	}
	return false
}

// listMax is the bound of a list opened under stack.
func (s jsonShape) listMax(stack []jsonFrame) int {
	var b strings.Builder
	for _, f := range stack {
		if !f.list {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		}
	}
	if n, ok := s.lists[b.String()]; ok {
		return n
	}
	return s.otherLists
}

// jsonPath names a place for an error: "records[3].users", then ".key".
func jsonPath(stack []jsonFrame, key string) string {
	var b strings.Builder
	for _, f := range stack {
		switch {
		case f.list:
			b.WriteString("[" + strconv.Itoa(f.n-1) + "]")
		case !f.wantKey: // reading this key's value
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(truncateRunes(f.key, 64))
		}
	}
	if key != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(truncateRunes(key, 64))
	}
	return b.String()
}
