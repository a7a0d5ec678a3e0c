package views

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite static/css/calendar-cols.css")

// colsCSS is the generated stylesheet with a class per grid line.
func colsCSS() string {
	var b strings.Builder
	fmt.Fprintf(&b, "/* Generated for the calendar grid (views/calendar_grid.go, MaxGridLine = %d):\n", MaxGridLine)
	b.WriteString(" c<N> starts an item at grid line N, e<N> ends it there, t<N> shifts the now\n")
	b.WriteString(" line by N tenths of a column. The CSP forbids style attributes, so grid\n")
	b.WriteString(" positions are classes. Regenerate: go test ./views -run TestCalendarColumnClasses -update */\n")
	for n := 1; n <= MaxGridLine; n++ {
		fmt.Fprintf(&b, ".c%d{grid-column-start:%d}", n, n)
	}
	for n := 1; n <= MaxGridLine; n++ {
		fmt.Fprintf(&b, ".e%d{grid-column-end:%d}", n, n)
	}
	for n := 0; n < 10; n++ {
		fmt.Fprintf(&b, ".t%d{transform:translateX(%d0%%)}", n, n)
	}
	b.WriteString("\n")
	return b.String()
}

func TestCalendarColumnClasses(t *testing.T) {
	const path = "../static/css/calendar-cols.css"
	want := colsCSS()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: run go test ./views -run TestCalendarColumnClasses -update", path)
	}
}
