package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// refCheckJSON is the walk as it was, on json.Decoder.Token: slow and
// allocating, but encoding/json's own reading, so the byte scanner is
// checked against it (TestCheckJSONAgreesWithDecoder, FuzzCheckJSON).

// refFrame is one open object or list of the walk.
type refFrame struct {
	list    bool
	key     string          // object: the key whose value is being read
	keys    []string        // object: keys seen, while they are few
	set     map[string]bool // object: keys seen (lower case), once many
	wantKey bool            // object: the next token is a key or '}'
	n, max  int             // list: elements so far and the bound
}

// refManyKeys is when an object's keys move from a slice to a map, so that an
// object with thousands of keys costs a lookup per key, not a scan.
const refManyKeys = 16

// refCheckJSON walks body and returns its first fault, or nil when it is one
// JSON object within shape followed by nothing but white space.
func refCheckJSON(body []byte, shape jsonShape) *jsonProblem {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // no number conversion: 1e999 is valid JSON, refused later by type
	var stack []refFrame
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
				done = refValueRead(stack)
				continue
			}
			key, _ := tok.(string) // the decoder allows only a string here
			if refSeenKey(&stack[top], key) {
				return &jsonProblem{fault: faultDuplicate, field: refPath(stack, key)}
			}
			stack[top].key, stack[top].wantKey = key, false
			continue
		}
		if tok == json.Delim(']') || tok == json.Delim('}') {
			stack = stack[:len(stack)-1]
			done = refValueRead(stack)
			continue
		}
		if p := refValueStarts(stack); p != nil {
			return p
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= shape.maxDepth {
				return &jsonProblem{fault: faultDepth, max: shape.maxDepth}
			}
			f := refFrame{wantKey: tok == json.Delim('{'), list: tok == json.Delim('[')}
			if f.list {
				f.max = refListMax(shape, stack)
			}
			stack = append(stack, f)
		default:
			done = refValueRead(stack)
		}
	}
}

// refValueStarts counts a new value into the list it is in.
func refValueStarts(stack []refFrame) *jsonProblem {
	top := len(stack) - 1
	if top < 0 || !stack[top].list {
		return nil
	}
	stack[top].n++
	if stack[top].n > stack[top].max {
		return &jsonProblem{fault: faultList, field: refPath(stack[:top], ""), max: stack[top].max}
	}
	return nil
}

// refValueRead notes that a value ended; it reports whether it was the body's.
func refValueRead(stack []refFrame) bool {
	top := len(stack) - 1
	if top < 0 {
		return true
	}
	if !stack[top].list {
		stack[top].wantKey = true
	}
	return false
}

// refSeenKey records key in f and reports whether it was there already.
func refSeenKey(f *refFrame, key string) bool {
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
	if len(f.keys) > refManyKeys {
		f.set = make(map[string]bool, 2*len(f.keys))
		for _, k := range f.keys {
			f.set[strings.ToLower(k)] = true
		}
		f.keys = nil
	}
	return false
}

// listMax is the bound of a list opened under stack.
func refListMax(s jsonShape, stack []refFrame) int {
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

// refPath names a place for an error: "records[3].users", then ".key".
func refPath(stack []refFrame, key string) string {
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
