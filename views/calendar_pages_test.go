package views

import (
	"slices"
	"testing"
	"time"
)

func TestPageNodes(t *testing.T) {
	tests := []struct {
		name     string
		total, n int
		want     NodePage
	}{
		{"a small lab has no pages", NodesPerPage, 3, NodePage{}},
		{"first page", 6250, 1, NodePage{N: 1, Pages: 63, First: 1, Last: 100, Total: 6250}},
		{"second page", 6250, 2, NodePage{N: 2, Pages: 63, First: 101, Last: 200, Total: 6250}},
		{"the last page is short", 6250, 63, NodePage{N: 63, Pages: 63, First: 6201, Last: 6250, Total: 6250}},
		{"past the last page", 101, 9, NodePage{N: 2, Pages: 2, First: 101, Last: 101, Total: 101}},
		{"before the first", 101, 0, NodePage{N: 1, Pages: 2, First: 1, Last: 100, Total: 101}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PageNodes(tt.total, tt.n); got != tt.want {
				t.Errorf("PageNodes(%d, %d) = %+v, want %+v", tt.total, tt.n, got, tt.want)
			}
		})
	}
	items := make([]int, 250)
	for i := range items {
		items[i] = i + 1
	}
	if got := OnPage(PageNodes(250, 3), items); !slices.Equal(got, items[200:]) {
		t.Errorf("page 3 of 250: %v", got)
	}
	if got := OnPage(NodePage{}, items[:7]); len(got) != 7 {
		t.Errorf("unpaged: %d items, want 7", len(got))
	}
	for s, want := range map[string]int{"": 1, "2": 2, "-1": 1, "x": 1, "0": 1, "63": 63} {
		if got := ParsePage(s); got != want {
			t.Errorf("ParsePage(%q) = %d, want %d", s, got, want)
		}
	}
	for n, want := range map[int]string{7: "7", 100: "100", 6250: "6,250", 1000000: "1,000,000"} {
		if got := grouped(n); got != want {
			t.Errorf("grouped(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestNodePageURLs: the pager's links keep the view's other parameters,
// and every other link keeps the page.
func TestNodePageURLs(t *testing.T) {
	date := time.Date(2026, 6, 3, 0, 0, 0, 0, time.UTC)
	v := CalendarView{View: ViewDay, Date: date, Model: "L40S", FreeOnly: true, OpenNodes: OpenNodes{Open: []int64{7}}, Page: PageNodes(300, 2)}
	if got, want := v.PageURL(3), "/calendar?date=2026-06-03&free=1&model=L40S&open=7&page=3&view=day"; got != want {
		t.Errorf("calendar next page %q, want %q", got, want)
	}
	if got, want := v.PageURL(1), "/calendar?date=2026-06-03&free=1&model=L40S&open=7&view=day"; got != want {
		t.Errorf("calendar first page %q, want %q", got, want)
	}
	if got, want := v.OpenURL(9), "/calendar?date=2026-06-03&free=1&model=L40S&open=7&open=9&page=2&view=day"; got != want {
		t.Errorf("calendar open link %q, want %q", got, want)
	}
	s := StatusView{OpenNodes: OpenNodes{OpenAll: true}, Page: PageNodes(300, 2)}
	if got, want := s.PageURL(3), "/status?open=all&page=3"; got != want {
		t.Errorf("status next page %q, want %q", got, want)
	}
	if got, want := (StatusView{Page: PageNodes(300, 2)}).PageURL(1), "/status"; got != want {
		t.Errorf("status first page %q, want %q", got, want)
	}
}
