package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// object is a JSON object that keeps its members in the order they were
// added, so that the document reads in the order of the Go declarations.
type object []member

type member struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := marshal(m.value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping: the document is read by
// people and tools, never put in a page.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

var timeType = reflect.TypeFor[time.Time]()

// schemas derives JSON Schemas from Go types by the rules encoding/json
// follows when it writes them: a field without omitempty is always there
// (required), a pointer may be null, a nil-free slice is an array, a
// struct is a component referred to by its Go name.
type schemas struct {
	named map[string]object
	types map[string]reflect.Type
	err   error
}

func (g *schemas) fail(format string, args ...any) object {
	if g.err == nil {
		g.err = fmt.Errorf("api: "+format, args...)
	}
	return object{}
}

// of is the schema of a value of type t.
func (g *schemas) of(t reflect.Type) object {
	if t == timeType {
		return object{{"type", "string"}, {"format", "date-time"}}
	}
	switch t.Kind() {
	case reflect.String:
		return object{{"type", "string"}}
	case reflect.Bool:
		return object{{"type", "boolean"}}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return object{{"type", "integer"}}
	case reflect.Float64:
		return object{{"type", "number"}}
	case reflect.Slice:
		return object{{"type", "array"}, {"items", g.of(t.Elem())}}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return g.fail("%s: map keys must be strings", t)
		}
		return object{{"type", "object"}, {"additionalProperties", g.of(t.Elem())}}
	case reflect.Pointer:
		s := g.of(t.Elem())
		if len(s) == 0 || s[0].key != "type" {
			return g.fail("%s: only a pointer to a scalar may be null", t)
		}
		s[0].value = []any{s[0].value, "null"}
		return s
	case reflect.Struct:
		return object{{"$ref", "#/components/schemas/" + g.component(t)}}
	}
	return g.fail("%s: no JSON Schema for this type", t)
}

// component adds the schema of struct type t under its Go name.
func (g *schemas) component(t reflect.Type) string {
	name := t.Name()
	if prev, ok := g.types[name]; ok {
		if prev != t {
			g.fail("two types named %s", name)
		}
		return name
	}
	g.types[name] = t
	props, required := object{}, []string{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, omitempty := tagName(f.Tag.Get("json"))
		if f.Anonymous || !f.IsExported() || name == "" || name == "-" {
			g.fail("%s.%s: every field needs its own json name", t, f.Name)
			continue
		}
		props = append(props, member{name, g.field(f)})
		if !omitempty {
			required = append(required, name)
		}
	}
	slices.Sort(required)
	g.named[name] = object{{"type", "object"}, {"additionalProperties", false}, {"required", required}, {"properties", props}}
	return name
}

// field is a field's schema with what its tags add: enum, minItems, doc.
func (g *schemas) field(f reflect.StructField) object {
	s := g.of(f.Type)
	if e, ok := f.Tag.Lookup("enum"); ok {
		s = append(s, member{"enum", strings.Split(e, ",")})
	}
	if m, ok := f.Tag.Lookup("minItems"); ok {
		n, err := strconv.Atoi(m)
		if err != nil {
			return g.fail("%s: minItems %q", f.Name, m)
		}
		s = append(s, member{"minItems", n})
	}
	if d, ok := f.Tag.Lookup("doc"); ok {
		s = append(s, member{"description", d})
	}
	return s
}

// parameters are the query parameters of a query struct, by its tags.
func (g *schemas) parameters(q any) []any {
	t := reflect.TypeOf(q)
	var out []any
	for i := range t.NumField() {
		f := t.Field(i)
		name, omitempty := tagName(f.Tag.Get("query"))
		p := object{{"name", name}, {"in", "query"}, {"required", !omitempty}, {"schema", g.of(f.Type)}}
		if d, ok := f.Tag.Lookup("doc"); ok {
			p = append(p, member{"description", d})
		}
		out = append(out, p)
	}
	return out
}
