package fairweek

import (
	"encoding/csv"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// Check fails the test for every cell of got that differs from want (and
// for a missing or extra row); surface names where got was read.
func Check(t testing.TB, surface string, got, want Table) {
	t.Helper()
	if strings.Join(got.Head, "|") != strings.Join(want.Head, "|") {
		t.Errorf("%s: head %q, want %q", surface, got.Head, want.Head)
	}
	for i := range max(len(got.Rows), len(want.Rows)) {
		var g, w []string
		if i < len(got.Rows) {
			g = got.Rows[i]
		}
		if i < len(want.Rows) {
			w = want.Rows[i]
		}
		if strings.Join(g, "|") != strings.Join(w, "|") {
			t.Errorf("%s: row %d is %q, want %q", surface, i+1, g, w)
		}
	}
}

// CSVTable reads a CSV export: its first row is the head.
func CSVTable(t testing.TB, body string) Table {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("CSV %q: %v", body, err)
	}
	return Table{Head: rows[0], Rows: rows[1:]}
}

var columnGap = regexp.MustCompile(`\s{2,}`)

// TextTable finds the table with head in a plain-text report (the text
// email, the CLI preview), laid out in columns two or more spaces apart,
// and reads it up to the next blank line. ok is false without such a head.
func TextTable(text string, head []string) (tb Table, ok bool) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.Join(columnGap.Split(strings.TrimSpace(l), -1), "|") != strings.Join(head, "|") {
			continue
		}
		tb.Head = head
		for _, r := range lines[i+1:] {
			if strings.TrimSpace(r) == "" {
				break
			}
			tb.Rows = append(tb.Rows, columnGap.Split(strings.TrimSpace(r), -1))
		}
		return tb, true
	}
	return tb, false
}

// HTMLTable finds the table whose header cells (th) are head in an HTML
// document (a report page, the HTML email) and reads its rows of td
// cells. ok is false without such a table.
func HTMLTable(doc *goquery.Document, head []string) (tb Table, ok bool) {
	doc.Find("table").EachWithBreak(func(_ int, table *goquery.Selection) bool {
		var h []string
		table.Find("th").Each(func(_ int, th *goquery.Selection) {
			if th.Closest("table").IsSelection(table) {
				h = append(h, strings.TrimSpace(th.Text()))
			}
		})
		if strings.Join(h, "|") != strings.Join(head, "|") {
			return true
		}
		tb, ok = Table{Head: h}, true
		table.Find("tr").Each(func(_ int, tr *goquery.Selection) {
			if !tr.Closest("table").IsSelection(table) || tr.ChildrenFiltered("td").Length() == 0 {
				return
			}
			var row []string
			tr.ChildrenFiltered("td").Each(func(_ int, td *goquery.Selection) { row = append(row, strings.TrimSpace(td.Text())) })
			tb.Rows = append(tb.Rows, row)
		})
		return false
	})
	return tb, ok
}
