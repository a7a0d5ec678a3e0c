// Package models holds gpubook's domain: the types, the rules as pure
// functions, the coded errors and the interfaces the adapters implement.
// It imports only the standard library so that every rule can be tested
// without a database or a web server.
package models

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Error codes. The web layer maps each to an HTTP status in exactly one place.
const (
	EINVALID      = "invalid"
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	EFORBIDDEN    = "forbidden"
	EUNAUTHORIZED = "unauthorized"
	ETOOMANY      = "rate_limited"
	EINTERNAL     = "internal"
)

// Msg is a user-facing message as a translation key and its template data.
// The domain never builds sentences itself: the translator (views/i18n)
// turns a Msg into English or Chinese, so a rule's message reads the same in
// a form, in the JSON API and on the command line.
type Msg struct {
	Key  string
	Data map[string]any
}

// M builds a Msg from a key and name/value pairs: M("err.gpu_missing", "ID", 3).
func M(key string, kv ...any) Msg {
	m := Msg{Key: key}
	if len(kv) > 1 {
		m.Data = make(map[string]any, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			m.Data[fmt.Sprint(kv[i])] = kv[i+1]
		}
	}
	return m
}

// String renders a Msg for logs: its key and data, stable and untranslated.
func (m Msg) String() string {
	if len(m.Data) == 0 {
		return m.Key
	}
	keys := make([]string, 0, len(m.Data))
	for k := range m.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m.Data[k])
	}
	return m.Key + "(" + strings.Join(parts, ",") + ")"
}

// Error is the one error type the domain returns to callers. Msg is safe to
// show to a user; internal causes stay in Err and are only logged.
type Error struct {
	Code string
	Msg  Msg
	// Fields maps a form or JSON field name to what is wrong with it.
	Fields map[string]Msg
	// Conflicts lists the bookings that stand in the way of an ECONFLICT.
	Conflicts []Conflict
	Err       error
}

func (e *Error) Error() string {
	s := e.Code + ": " + e.Msg.String()
	for _, k := range sortedKeys(e.Fields) {
		s += "; " + k + ": " + e.Fields[k].String()
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// NewError builds a coded error with a user-facing message.
func NewError(code string, msg Msg) *Error { return &Error{Code: code, Msg: msg} }

// Internal wraps an unexpected failure; users see only a generic message.
func Internal(err error) *Error {
	return &Error{Code: EINTERNAL, Msg: M("err.internal"), Err: err}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// AsError returns err's *Error, or an EINTERNAL one wrapping err.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal(err)
}

// FieldErrors collects validation problems so that a form can show every
// problem at once instead of the first one.
type FieldErrors map[string]Msg

// Add records msg for field unless the field already has a problem.
func (f FieldErrors) Add(field string, msg Msg) {
	if _, ok := f[field]; !ok {
		f[field] = msg
	}
}

// Err returns nil when there are no problems, otherwise an EINVALID *Error.
func (f FieldErrors) Err() error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Code: EINVALID, Msg: M("err.invalid"), Fields: map[string]Msg(f)}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
