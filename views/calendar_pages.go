package views

import (
	"strconv"
	"strings"
)

// NodesPerPage is how many nodes the calendar and the status page show at
// once, and how many a lab may have before they page: nobody reads 6,250
// rows, and each view read the bookings of every node and rendered a row
// for each (828 kB for the calendar of 2,000 nodes, collapsed).
const NodesPerPage = 100

// NodePage is which of a large lab's nodes a page shows: the nodes at
// positions First to Last (1-based) of Total, page N of Pages. The zero
// value is an unpaged lab.
type NodePage struct {
	N, Pages           int
	First, Last, Total int
}

// PageNodes is page n (1-based) of total nodes, clamped to the first and
// the last page: a link to a page that a smaller lab no longer has shows
// its last page, not an error. A lab of NodesPerPage nodes or fewer has
// no pages.
func PageNodes(total, n int) NodePage {
	if total <= NodesPerPage {
		return NodePage{}
	}
	pages := (total + NodesPerPage - 1) / NodesPerPage
	n = max(1, min(n, pages))
	return NodePage{N: n, Pages: pages, First: (n-1)*NodesPerPage + 1, Last: min(n*NodesPerPage, total), Total: total}
}

// ParsePage reads ?page=N; anything but a positive number is the first page.
func ParsePage(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// Paged says whether the lab's nodes show a page at a time.
func (pg NodePage) Paged() bool { return pg.Pages > 0 }

// OnPage is the page's part of items, all of them on an unpaged lab.
func OnPage[T any](pg NodePage, items []T) []T {
	if !pg.Paged() || len(items) < pg.Last {
		return items
	}
	return items[pg.First-1 : pg.Last]
}

// query is the page's parameter, none for the first page.
func (pg NodePage) query() string {
	if pg.N > 1 {
		return strconv.Itoa(pg.N)
	}
	return ""
}

// grouped writes n with thousands separators: "6,250".
func grouped(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
