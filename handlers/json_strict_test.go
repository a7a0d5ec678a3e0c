package handlers

import (
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	shape := jsonShape{maxDepth: 5, otherLists: 2, lists: map[string]int{"records": 3, "records.users": 1}, totals: map[string]int{"records.users": 1}}
	tests := []struct {
		name  string
		body  string
		fault jsonFault
		field string
	}{
		{"valid", `{"records":[{"users":[{"user":"a"}]},{}],"x":[1,2]}`, 0, ""},
		{"white space after", "{}\n\t ", 0, ""},
		{"empty", ``, faultSyntax, ""},
		{"cut short", `{"records":[`, faultSyntax, ""},
		{"not an object", `[{}]`, faultNotObject, ""},
		{"null", `null`, faultNotObject, ""},
		{"trailing object", `{}{}`, faultTrailing, ""},
		{"trailing garbage", `{} x`, faultTrailing, ""},
		{"repeated key", `{"a":1,"a":2}`, faultDuplicate, "a"},
		{"repeated key in another case", `{"node":1,"Node":2}`, faultDuplicate, "Node"},
		{"repeated key deep", `{"records":[{},{"users":[{"u":1,"u":2}]}]}`, faultDuplicate, "records[1].users[0].u"},
		{"repeated key among many", `{` + keysBody(40) + `,"k7a":0}`, faultDuplicate, "k7a"},
		{"same key in sibling objects", `{"records":[{"a":1},{"a":1}]}`, 0, ""},
		{"too deep", `{"a":[[[[[]]]]]}`, faultDepth, ""},
		{"long list", `{"records":[{},{},{},{}]}`, faultList, "records"},
		{"long inner list", `{"records":[{},{"users":[{},{}]}]}`, faultList, "records[1].users"},
		{"long unnamed list", `{"x":[1,2,3]}`, faultList, "x"},
		{"huge number is fine here", `{"n":1e999}`, 0, ""},
		{"lists long together", `{"records":[{"users":[{}]},{"users":[]},{"users":[{}]}]}`, faultTotal, "records[2].users"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := checkJSON([]byte(tt.body), shape)
			var fault jsonFault
			var field string
			if p != nil {
				fault, field = p.fault, p.field
			}
			if fault != tt.fault || field != tt.field {
				t.Errorf("got fault %d at %q, want %d at %q", fault, field, tt.fault, tt.field)
			}
		})
	}
}

func keysBody(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + string(rune('0'+i%10)) + string(rune('a'+i/10)) + `":0`)
	}
	return b.String()
}

// tricky bodies where a hand-written scanner could part from encoding/json.
var trickyBodies = []string{
	`{"a":1,"\u0061":2}`, `{"K":1,"\u212a":2}`, `{"s":1,"ſ":2}`, `{"\ud800":1,"\ufffd":2}`,
	`{"\ud83d\ude00":1,"😀":2}`, `{"a\"b":1,"a\"B":2}`, `{"é":1,"É":2}`, "{\"\xff\":1,\"\xfe\":2}",
	`{` + keysBody(40) + `,"K7A":0}`, `{` + keysBody(40) + `,"\u006b7a":0}`, `{` + keysBody(40) + `,"\u212a7b":0}`,
	`12x`, `nullx`, `"a"x`, `1.`, `-`, `01`, `tru`, ` `, `{"a":01}`, `{"a":1.e3}`, `{"a":-0.5E+3}`,
	`{"a":[1,]}`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":1 "b":2}`, `{"a":"\x01"}`, `{"a":"\q"}`, `{"a":"\u12g4"}`,
	`{"x":[1,2,3x]}`, `{"x":[1,2,[`, `{"a":1,"a" x`, `{"a":[[[[[x`, `{"records":[{},{},{},{x`,
	`{"records":[{"users":[{},{}]}]}`, `{"":1,"":2}`, `{"a":{"":{"b":[1,2,3]}}}`, `{"a":true,"b":false,"c":null}`,
	`{"a":nul}`, `{"a":"x"}  {`, "{}\x00", `{"a":"\/\b\f\n\r\t"}`, `{"records":{"users":[1,2]}}`,
}

// TestCheckJSONAgreesWithDecoder holds the byte scanner to the fault and
// place the walk on json.Decoder.Token finds, body by body.
func TestCheckJSONAgreesWithDecoder(t *testing.T) {
	shape := jsonShape{maxDepth: 5, otherLists: 2, lists: map[string]int{"records": 3, "records.users": 1}, totals: map[string]int{"records.users": 1}}
	for _, body := range trickyBodies {
		if got, want := checkJSON([]byte(body), shape), refCheckJSON([]byte(body), shape); !sameProblem(got, want) {
			t.Errorf("%q: got %+v, want %+v", body, got, want)
		}
	}
}

// FuzzCheckJSON looks for a body on which the two walks part.
func FuzzCheckJSON(f *testing.F) {
	for _, b := range trickyBodies {
		f.Add([]byte(b))
	}
	shape := jsonShape{maxDepth: 5, otherLists: 2, lists: map[string]int{"records": 3, "records.users": 1}, totals: map[string]int{"records.users": 1}}
	f.Fuzz(func(t *testing.T, body []byte) {
		if got, want := checkJSON(body, shape), refCheckJSON(body, shape); !sameProblem(got, want) {
			t.Errorf("%q: got %+v, want %+v", body, got, want)
		}
	})
}

func sameProblem(a, b *jsonProblem) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func TestCheckJSONCount(t *testing.T) {
	shape := jsonShape{maxDepth: 5, otherLists: 8, lists: map[string]int{"reports": 4, "reports.gpu_uuids": 3}}
	tests := []struct {
		name  string
		body  string
		path  string
		want  int
		fault jsonFault
	}{
		{"the list", `{"reports":[{},{},{}],"x":[1]}`, "reports", 3, 0},
		{"empty list", `{"reports":[]}`, "reports", 0, 0},
		{"null", `{"reports":null}`, "reports", 0, 0},
		{"absent", `{"x":[1,2]}`, "reports", 0, 0},
		{"not a list", `{"reports":{"a":[1,2]}}`, "reports", 0, 0},
		{"lists inside the list are not its elements", `{"reports":[[1,2],[3]]}`, "reports", 2, 0},
		{"inner lists at a path add up", `{"reports":[{"gpu_uuids":["a","b"]},{"gpu_uuids":["c"]}]}`, "reports.gpu_uuids", 3, 0},
		{"other case is not counted", `{"Reports":[1,2]}`, "reports", 0, 0},
		{"no path counts nothing", `{"reports":[1,2]}`, "", 0, 0},
		{"fault", `{"reports":[1,2,3,4,5]}`, "reports", 4, faultList},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, p := checkJSONCount([]byte(tt.body), shape, tt.path)
			var fault jsonFault
			if p != nil {
				fault = p.fault
			}
			if fault != tt.fault {
				t.Errorf("got fault %d, want %d", fault, tt.fault)
			}
			if tt.fault == 0 && got != tt.want {
				t.Errorf("got %d elements, want %d", got, tt.want)
			}
		})
	}
}
