package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models/wire"
)

// decodeUsage reads a usage body as a wire.UsageStream: checked whole by
// checkJSON like every agent body, but decoded one record at a time when
// the stream is read. The batch is never held as Go values: for the
// largest body that is tens of thousands of users, several times the
// body's size, which is what one request used to cost the heap.
func decodeUsage(c echo.Context) (wire.UsageStream, error) {
	body, err := readAgentBody(c, wire.MaxBody)
	if err != nil {
		return wire.UsageStream{}, err
	}
	if p := checkJSON(body, usageShape); p != nil {
		return wire.UsageStream{}, agentJSONProblem(p)
	}
	var env struct {
		Node    string            `json:"node"`
		BatchID string            `json:"batch_id"`
		Records rawList[wireList] `json:"records"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			te.Field = "records" // rawList's own error, which json does not place
		}
		return wire.UsageStream{}, agentDecodeError("", err)
	}
	raw := env.Records.raw
	return wire.UsageStream{Node: env.Node, BatchID: env.BatchID, Len: countElements(raw),
		Each: func(fn func(int, *wire.UsageRecord) error) error {
			var rec wire.UsageRecord
			return eachElement(raw, "records", func(i int, dec *json.Decoder) error {
				users := rec.Users[:cap(rec.Users)]
				clear(users) // json keeps what an element it reuses held
				rec = wire.UsageRecord{Users: users[:0]}
				if err := dec.Decode(&rec); err != nil {
					return agentDecodeError(fmt.Sprintf("records[%d]", i), err)
				}
				return fn(i, &rec)
			})
		}}, nil
}

// wireList is the type the usage records would decode to, named in the
// error for a "records" that is not a list.
type wireList = []wire.UsageRecord

// rawList keeps a list's JSON text as it lies in the body (no copy) to be
// decoded later, element by element; null is an empty list. T is the type
// the list stands for, named when the value is not a list.
type rawList[T any] struct{ raw []byte }

func (l *rawList[T]) UnmarshalJSON(b []byte) error {
	switch {
	case bytes.Equal(b, []byte("null")):
		l.raw = nil
		return nil
	case len(b) == 0 || b[0] != '[':
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[T]()}
	}
	l.raw = b
	return nil
}

// jsonKind names the kind of a JSON value as json's type errors do.
func jsonKind(b []byte) string {
	switch {
	case len(b) == 0:
		return "value"
	case b[0] == '"':
		return "string"
	case b[0] == '{':
		return "object"
	case b[0] == 't' || b[0] == 'f':
		return "bool"
	}
	return "number"
}

// countElements counts the elements of a list's JSON text, which checkJSON
// has found valid.
func countElements(list []byte) int {
	n, depth, inStr, some := 0, 0, false, false
	for i := 0; i < len(list); i++ {
		c := list[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 1:
			n++
		}
		if depth >= 1 && !(depth == 1 && c == '[') {
			some = true
		}
	}
	if some {
		n++
	}
	return n
}

// eachElement decodes a list's JSON text element by element: fn reads one
// element from dec. The decoder reads the list through a small buffer of
// its own, so an element costs what it decodes to, not the list.
func eachElement(list []byte, name string, fn func(i int, dec *json.Decoder) error) error {
	if list == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(list))
	if _, err := dec.Token(); err != nil { // the '['
		return agentDecodeError(name, err)
	}
	for i := 0; dec.More(); i++ {
		if err := fn(i, dec); err != nil {
			return err
		}
	}
	return nil
}
