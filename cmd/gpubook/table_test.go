package main

import (
	"strings"
	"testing"
)

// Columns line up by terminal width, also after a Chinese name (two
// columns per character).
func TestTableAlignsCJK(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := table(&b, []string{"ID", "NAME", "ADMIN"}, [][]string{{"1", "陈伟", "yes"}, {"22", "Bob", "no"}}); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	want := []string{
		"ID  NAME  ADMIN",
		"1   陈伟  yes",
		"22  Bob   no",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
