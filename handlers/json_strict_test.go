package handlers

import (
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	shape := jsonShape{maxDepth: 5, otherLists: 2, lists: map[string]int{"records": 3, "records.users": 1}}
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
