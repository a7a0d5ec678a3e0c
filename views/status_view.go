package views

import (
	"net/url"

	"github.com/gpubook/gpubook/models"
)

// StatusView is the live status page's data.
type StatusView struct {
	Nodes []models.NodeStatus
	// Collapsed says the nodes show as one summary row each unless
	// OpenNodes names them: above CollapseAbove GPU rows, as on the
	// calendar.
	Collapsed bool
	OpenNodes
	// Page is the part of a large lab's nodes shown (?page=N), as on the
	// calendar.
	Page NodePage
}

// URL is the status page's address with v's open nodes.
func (v StatusView) URL() string {
	q := url.Values{}
	v.addTo(q)
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
	v.OpenNodes = v.with(id)
	return v.URL()
}

// CloseURL is this page with a node collapsed again.
func (v StatusView) CloseURL(id int64) string {
	v.OpenNodes = v.without(id)
	return v.URL()
}

// AllURL is this page with every node open.
func (v StatusView) AllURL() string {
	v.OpenNodes = OpenNodes{OpenAll: true}
	return v.URL()
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
