package api

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSchemaOfFields pins the rules a schema is derived by: omitempty
// makes a field optional, a pointer nullable, tags add enum, minItems
// and a description; a type the rules do not cover is an error, never a
// silent {}.
func TestSchemaOfFields(t *testing.T) {
	t.Parallel()
	type Sample struct {
		ID    int64             `json:"id"`
		When  *time.Time        `json:"when"`
		IDs   []int64           `json:"ids" minItems:"1"`
		Kind  string            `json:"kind,omitempty" enum:",a" doc:"which"`
		Extra map[string]string `json:"extra,omitempty"`
	}
	g := &schemas{named: map[string]object{}, types: map[string]reflect.Type{}}
	g.of(reflect.TypeFor[Sample]())
	if g.err != nil {
		t.Fatal(g.err)
	}
	got, err := marshal(g.named["Sample"])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","additionalProperties":false,"required":["id","ids","when"],"properties":{` +
		`"id":{"type":"integer"},"when":{"type":["string","null"],"format":"date-time"},` +
		`"ids":{"type":"array","items":{"type":"integer"},"minItems":1},"kind":{"type":"string","enum":["","a"],"description":"which"},` +
		`"extra":{"type":"object","additionalProperties":{"type":"string"}}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	type noName struct{ N int }
	type funcField struct {
		F func() `json:"f"`
	}
	type nullObject struct {
		P *Sample `json:"p"`
	}
	type intKeys struct {
		M map[int]string `json:"m"`
	}
	for _, bad := range []any{noName{}, funcField{}, nullObject{}, intKeys{}} {
		g := &schemas{named: map[string]object{}, types: map[string]reflect.Type{}}
		g.component(reflect.TypeOf(bad))
		if g.err == nil {
			t.Errorf("%T: no error", bad)
		}
	}
}

// TestDocumentIsJSON: the document parses, and every operation's
// success answers with the type the table names.
func TestDocumentIsJSON(t *testing.T) {
	t.Parallel()
	doc, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct{ Schema map[string]any } `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	for _, op := range operations {
		if op.answer == nil {
			continue
		}
		r := d.Paths[op.path][strings.ToLower(op.method)].Responses
		ref, _ := r[strconv.Itoa(op.status)].Content["application/json"].Schema["$ref"].(string)
		if want := "#/components/schemas/" + reflect.TypeOf(op.answer).Name(); ref != want {
			t.Errorf("%s %s %d answers %q, want %q", op.method, op.path, op.status, ref, want)
		}
	}
}
