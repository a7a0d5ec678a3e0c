package views

import (
	"net/url"
	"strconv"

	"github.com/gpubook/gpubook/models"
)

// StatusView is the live status page's data.
type StatusView struct {
	Nodes []models.NodeStatus
	// Collapsed says the nodes show as one summary row each unless Open
	// names them (?open=ID, repeatable; ?open=all opens every node): above
	// CollapseAbove GPU rows, as on the calendar.
	Collapsed bool
	Open      []int64
	OpenAll   bool
	// Page is the part of a large lab's nodes shown (?page=N), as on the
	// calendar.
	Page NodePage
}

// URL is the status page's address with v's open nodes.
func (v StatusView) URL() string {
	q := url.Values{}
	if v.OpenAll {
		q.Set("open", "all")
	}
	for _, id := range v.Open {
		q.Add("open", strconv.FormatInt(id, 10))
	}
	if pg := v.Page.query(); pg != "" {
		q.Set("page", pg)
	}
	if len(q) == 0 {
		return "/status"
	}
	return "/status?" + q.Encode()
}

// PageURL is this page on page n of the nodes.
func (v StatusView) PageURL(n int) string {
	v.Page.N = n
	return v.URL()
}

// OpenURL is this page with one more node open.
func (v StatusView) OpenURL(id int64) string {
	v.Open = append(v.Open[:len(v.Open):len(v.Open)], id)
	return v.URL()
}

// CloseURL is this page with a node collapsed again.
func (v StatusView) CloseURL(id int64) string {
	var keep []int64
	for _, o := range v.Open {
		if o != id {
			keep = append(keep, o)
		}
	}
	v.Open, v.OpenAll = keep, false
	return v.URL()
}

// AllURL is this page with every node open.
func (v StatusView) AllURL() string {
	v.Open, v.OpenAll = nil, true
	return v.URL()
}

// OpenSet is Open as a set.
func (v StatusView) OpenSet() map[int64]bool {
	m := make(map[int64]bool, len(v.Open))
	for _, id := range v.Open {
		m[id] = true
	}
	return m
}

// gpuRows is the number of GPU rows of the page's nodes, for the note on
// a collapsed page.
func (v StatusView) gpuRows() int {
	n := 0
	for _, x := range v.Nodes {
		n += len(x.GPUs)
	}
	return n
}
