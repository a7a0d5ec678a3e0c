package api

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Values is the query of GET /bookings, as the client sends it.
func (q BookingsQuery) Values() url.Values { return values(q) }

// Values is the query of GET /slots, as the client sends it.
func (q SlotsQuery) Values() url.Values { return values(q) }

// values encodes a query struct by its query tags: times in UTC to the
// second, numbers as Go prints them; an omitempty field is left out when
// zero. The document's parameters come from the same tags.
func values(q any) url.Values {
	out := url.Values{}
	v := reflect.ValueOf(q)
	for i := range v.NumField() {
		name, omit := tagName(v.Type().Field(i).Tag.Get("query"))
		f := v.Field(i)
		t, isTime := f.Interface().(time.Time)
		if omit && (f.IsZero() || isTime && t.IsZero()) {
			continue
		}
		var s string
		switch x := f.Interface().(type) {
		case time.Time:
			s = x.UTC().Format(time.RFC3339)
		case float64:
			s = strconv.FormatFloat(x, 'g', -1, 64)
		default:
			s = fmt.Sprint(x)
		}
		out.Set(name, s)
	}
	return out
}

// FieldNames lists the JSON names of a body type's fields, in order: what
// a strict parser accepts, and what the document lists as its properties.
func FieldNames(body any) []string {
	t := reflect.TypeOf(body)
	var out []string
	for i := range t.NumField() {
		if name, _ := tagName(t.Field(i).Tag.Get("json")); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// tagName splits a json or query tag into the name and its omitempty.
func tagName(tag string) (name string, omitempty bool) {
	name, opts, _ := strings.Cut(tag, ",")
	return name, strings.Contains(","+opts+",", ",omitempty,")
}
