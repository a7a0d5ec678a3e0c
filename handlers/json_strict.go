package handlers

import (
	"hash/maphash"
)

// The one strict reading of JSON bodies, shared by /api/v1 and the agent
// API. encoding/json alone keeps the last of repeated keys, matches names
// case-insensitively, ignores nothing after a value only when asked, and
// allocates every element of a list before anyone can count them; so each
// body is first walked byte by byte, once, and refused at the first fault,
// before anything is decoded into a Go value. The walk is hand-written
// rather than built on json.Decoder.Token, which allocates for every token
// (hundreds of thousands for the largest agent body): it allocates only
// for a few growing buffers, so checking costs little beside the body.

// jsonShape bounds a body: how deep it may nest and how long its lists may
// be. lists maps a list's path (object keys joined by ".", list levels left
// out: "records.users") to its most elements; any other list gets
// otherLists, so that no list is unbounded.
type jsonShape struct {
	maxDepth   int
	lists      map[string]int
	otherLists int
	// totals bounds the elements of every list at a path together
	// ("reports.gpu_uuids": the GPUs of all reports of a batch).
	totals map[string]int
	// maxKeys bounds the keys of each object (0: no bound), so that a
	// body of nothing but unknown keys is refused at the first one too
	// many instead of costing a key record and a hash entry for each.
	maxKeys int
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
	faultTotal                          // the lists at one path longer than their bound together
	faultKeys                           // an object with more keys than maxKeys
)

// jsonProblem is the first fault of a body and where it is: the path of
// the repeated key or the long list ("records[3].users"), else "".
type jsonProblem struct {
	fault jsonFault
	field string
	max   int
}

// keySpan is a key of an open object: body[start:end] as written, or
// unq[start:end] when it held escapes and had to be unescaped to compare.
type keySpan struct {
	start, end int
	unquoted   bool
}

// jsonFrame is one open object or list of the walk.
type jsonFrame struct {
	list  bool
	key   keySpan          // object: the key whose value is being read
	first int              // object: where its keys start in jsonWalk.keys
	unqAt int              // where its unescaped keys start in jsonWalk.unq
	set   map[uint64]int32 // object: folded-key hash to index in keys, once many
	n     int              // list: elements so far
	max   int              // list: the bound
	total int              // list: 1 + its index in jsonWalk.totals, or 0 when its path has no total
	count bool             // list: a value at jsonWalk.countPath, whose elements it counts
}

// jsonTotal counts the elements of the lists at one path of shape.totals.
type jsonTotal struct {
	path   string
	n, max int
}

// manyKeys is when an object's keys are also hashed, so that an object
// with thousands of keys costs a lookup per key, not a scan.
const manyKeys = 16

// jsonWalk is the state of one checkJSON call.
type jsonWalk struct {
	body   []byte
	pos    int
	shape  jsonShape
	stack  []jsonFrame
	keys   []keySpan // keys of the open objects, innermost last
	unq    []byte    // unescaped keys that held escapes
	fold   []byte    // scratch: a key case-folded for hashing
	path   []byte    // scratch: a list's path for its bound
	totals []jsonTotal
	seed   maphash.Seed

	countPath string // checkJSONCount: the path of the lists it counts
	counted   int    // their elements so far
}

// checkJSON walks body and returns its first fault, or nil when it is one
// JSON object within shape followed by nothing but white space.
func checkJSON(body []byte, shape jsonShape) *jsonProblem {
	_, p := checkJSONCount(body, shape, "")
	return p
}

// checkJSONCount is checkJSON that also counts, while it walks, the
// elements of the lists that are the values of keys at path ("violations":
// the list of the body's "violations"), so that a caller can size a slice
// for them without another pass over the body. Keys match as written.
func checkJSONCount(body []byte, shape jsonShape, path string) (int, *jsonProblem) {
	w := jsonWalk{body: body, shape: shape, seed: maphash.MakeSeed(), countPath: path}
	p := w.check()
	return w.counted, p
}

// check is checkJSON's walk of the whole body.
func (w *jsonWalk) check() *jsonProblem {
	body := w.body
	w.skipSpace()
	if w.pos >= len(body) {
		return &jsonProblem{fault: faultSyntax}
	}
	switch c := body[w.pos]; c {
	case '{':
	case '[':
		return &jsonProblem{fault: faultNotObject}
	default:
		if !w.scalar() {
			return &jsonProblem{fault: faultSyntax}
		}
		return &jsonProblem{fault: faultNotObject}
	}
	if p := w.container(); p != nil {
		return p
	}
	w.skipSpace()
	if w.pos < len(body) {
		return &jsonProblem{fault: faultTrailing}
	}
	return nil
}

// container reads the object or list at pos, which the caller has counted.
func (w *jsonWalk) container() *jsonProblem {
	if len(w.stack) >= w.shape.maxDepth {
		return &jsonProblem{fault: faultDepth, max: w.shape.maxDepth}
	}
	list := w.body[w.pos] == '['
	f := jsonFrame{list: list, first: len(w.keys), unqAt: len(w.unq)}
	if list {
		f.max = w.listMax()
		f.total = w.listTotal()
		f.count = w.countPath != "" && len(w.stack) > 0 && !w.stack[len(w.stack)-1].list && string(w.path) == w.countPath
	}
	w.stack = append(w.stack, f)
	w.pos++
	var p *jsonProblem
	if list {
		p = w.listBody()
	} else {
		p = w.objectBody()
	}
	top := &w.stack[len(w.stack)-1]
	if top.count {
		w.counted += top.n
	}
	w.keys, w.unq = w.keys[:top.first], w.unq[:top.unqAt]
	w.stack = w.stack[:len(w.stack)-1]
	return p
}

// listBody reads a list's elements and its ']'.
func (w *jsonWalk) listBody() *jsonProblem {
	w.skipSpace()
	if w.pos < len(w.body) && w.body[w.pos] == ']' {
		w.pos++
		return nil
	}
	for {
		if p := w.value(); p != nil {
			return p
		}
		if !w.expect(',', ']') {
			return &jsonProblem{fault: faultSyntax}
		}
		if w.body[w.pos-1] == ']' {
			return nil
		}
	}
}

// objectBody reads an object's members and its '}'.
func (w *jsonWalk) objectBody() *jsonProblem {
	w.skipSpace()
	if w.pos < len(w.body) && w.body[w.pos] == '}' {
		w.pos++
		return nil
	}
	for {
		w.skipSpace()
		key, ok := w.key()
		if !ok {
			return &jsonProblem{fault: faultSyntax}
		}
		if m := w.shape.maxKeys; m > 0 && len(w.keys)-w.stack[len(w.stack)-1].first >= m {
			return &jsonProblem{fault: faultKeys, field: w.pathOf(w.stack[:len(w.stack)-1], nil), max: m}
		}
		if w.seenKey(key) {
			return &jsonProblem{fault: faultDuplicate, field: w.jsonPath(key)}
		}
		w.stack[len(w.stack)-1].key = key
		if !w.expect(':') {
			return &jsonProblem{fault: faultSyntax}
		}
		if p := w.value(); p != nil {
			return p
		}
		if !w.expect(',', '}') {
			return &jsonProblem{fault: faultSyntax}
		}
		if w.body[w.pos-1] == '}' {
			return nil
		}
	}
}

// value reads one value inside the open container and counts it into its
// list: a scalar is read before it is counted, a container after, the
// order in which a token reader meets the faults.
func (w *jsonWalk) value() *jsonProblem {
	w.skipSpace()
	if w.pos >= len(w.body) {
		return &jsonProblem{fault: faultSyntax}
	}
	if c := w.body[w.pos]; c == '{' || c == '[' {
		if p := w.countValue(); p != nil {
			return p
		}
		return w.container()
	}
	if !w.scalar() {
		return &jsonProblem{fault: faultSyntax}
	}
	return w.countValue()
}

// countValue counts a new value into the list it is in.
func (w *jsonWalk) countValue() *jsonProblem {
	top := len(w.stack) - 1
	if !w.stack[top].list {
		return nil
	}
	w.stack[top].n++
	if w.stack[top].n > w.stack[top].max {
		return &jsonProblem{fault: faultList, field: w.pathOf(w.stack[:top], nil), max: w.stack[top].max}
	}
	if i := w.stack[top].total - 1; i >= 0 {
		if w.totals[i].n++; w.totals[i].n > w.totals[i].max {
			return &jsonProblem{fault: faultTotal, field: w.pathOf(w.stack[:top], nil), max: w.totals[i].max}
		}
	}
	return nil
}

// listTotal is 1 + the index in w.totals of the count of the list whose
// path listMax just built, or 0 when the shape bounds no total there.
func (w *jsonWalk) listTotal() int {
	bound, ok := w.shape.totals[string(w.path)]
	if !ok {
		return 0
	}
	for i, t := range w.totals {
		if t.path == string(w.path) {
			return i + 1
		}
	}
	w.totals = append(w.totals, jsonTotal{path: string(w.path), max: bound})
	return len(w.totals)
}

// keyBytes is the text of a key.
func (w *jsonWalk) keyBytes(k keySpan) []byte {
	if k.unquoted {
		return w.unq[k.start:k.end]
	}
	return w.body[k.start:k.end]
}

// listMax is the bound of a list opened under the open containers.
func (w *jsonWalk) listMax() int {
	w.path = w.path[:0]
	for _, f := range w.stack {
		if !f.list {
			if len(w.path) > 0 {
				w.path = append(w.path, '.')
			}
			w.path = append(w.path, w.keyBytes(f.key)...)
		}
	}
	if n, ok := w.shape.lists[string(w.path)]; ok { // no allocation for the lookup
		return n
	}
	return w.shape.otherLists
}
