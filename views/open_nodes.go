package views

import (
	"net/url"
	"strconv"
)

// OpenNodes is which nodes of a collapsed page show their GPUs: the ones
// named (?open=ID, repeatable), or every node (?open=all). The calendar
// and the live status page share it.
type OpenNodes struct {
	Open    []int64
	OpenAll bool
}

// with is o with one more node open.
func (o OpenNodes) with(id int64) OpenNodes {
	o.Open = append(o.Open[:len(o.Open):len(o.Open)], id)
	return o
}

// without is o with a node collapsed again.
func (o OpenNodes) without(id int64) OpenNodes {
	var keep []int64
	for _, x := range o.Open {
		if x != id {
			keep = append(keep, x)
		}
	}
	return OpenNodes{Open: keep}
}

// addTo writes o into an address's query.
func (o OpenNodes) addTo(q url.Values) {
	if o.OpenAll {
		q.Set("open", "all")
	}
	for _, id := range o.Open {
		q.Add("open", strconv.FormatInt(id, 10))
	}
}

// OpenSet is Open as a set.
func (o OpenNodes) OpenSet() map[int64]bool {
	m := make(map[int64]bool, len(o.Open))
	for _, id := range o.Open {
		m[id] = true
	}
	return m
}
