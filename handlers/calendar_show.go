package handlers

import (
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Calendar serves the week and day grids.
type Calendar struct{ *Base }

// minGridStep keeps the week view within the stylesheet's grid lines even
// when the booking slot is very short.
const minGridStep = 15 * time.Minute

// weekGridStep is the week view's column: an hour keeps a week within
// 1280 px with columns a mouse can still hit (about 6 px), and the classes
// and slot list short.
const weekGridStep = time.Hour

// parseOpen reads the expanded nodes: IDs, or "all".
func parseOpen(vals []string) (ids []int64, all bool) {
	seen := map[int64]bool{}
	for _, s := range vals {
		if s == "all" {
			all = true
		} else if id, err := strconv.ParseInt(s, 10, 64); err == nil && id > 0 && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, all
}

// nodesWithModel is the nodes that have a GPU of model ("": every node),
// the ones the calendar pages through.
func nodesWithModel(nodes []models.Node, model string) []models.Node {
	if model == "" {
		return nodes
	}
	var out []models.Node
	for _, n := range nodes {
		for _, g := range n.GPUs {
			if g.Model == model {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// filterNodes is what the node filter offers: every node, or on a large
// lab the nodes of the page shown, or of the page that holds the node
// chosen: a list of 6,250 names was 250 kB of every view.
func filterNodes(nodes, shown []models.Node, nodeID int64) []models.Node {
	if len(nodes) <= views.NodesPerPage {
		return nodes
	}
	if nodeID == 0 {
		return shown
	}
	at := 0
	for i, n := range nodes {
		if n.ID == nodeID {
			at = i
		}
	}
	return views.OnPage(views.PageNodes(len(nodes), at/views.NodesPerPage+1), nodes)
}

// gpuCount is the number of GPU rows the filters leave.
func gpuCount(nodes []models.Node, nodeID int64, model string) int {
	n := 0
	for _, node := range nodes {
		for _, g := range node.GPUs {
			if (nodeID == 0 || node.ID == nodeID) && (model == "" || g.Model == model) {
				n++
			}
		}
	}
	return n
}

// Show renders the grid with three store calls whatever the number of
// bookings: the nodes with their GPUs, the bookings of the range and the
// pending priority requests (shown tentative).
func (h *Calendar) Show(c echo.Context) error {
	p := h.NewPage(c)
	v := views.CalendarView{View: views.ViewWeek, Model: c.QueryParam("model")}
	if c.QueryParam("view") == views.ViewDay {
		v.View = views.ViewDay
	}
	v.Date = parseDate(c.QueryParam("date"), p.Now, p.Location)
	v.Rolling = v.View == views.ViewWeek && c.QueryParam("days") == "next"
	v.NodeID, _ = strconv.ParseInt(c.QueryParam("node"), 10, 64)
	v.FreeOnly = c.QueryParam("free") == "1"
	v.Open, v.OpenAll = parseOpen(c.QueryParams()["open"])
	ctx := c.Request().Context()
	nodes, err := h.Store.Nodes(ctx)
	if err != nil {
		return err
	}
	start, days := v.Range(p.Location)
	end := start.AddDate(0, 0, days)
	v.Collapsed = !v.OpenAll && gpuCount(nodes, v.NodeID, v.Model) > views.CollapseAbove
	shown := nodes
	if v.NodeID == 0 {
		listed := nodesWithModel(nodes, v.Model)
		v.Page = views.PageNodes(len(listed), views.ParsePage(c.QueryParam("page")))
		shown = views.OnPage(v.Page, listed)
	}
	bookings, err := h.bookings(c, v, shown, start, end, later(p.Now, start))
	if err != nil {
		return err
	}
	pending, err := h.Store.Requests(ctx, models.RequestFilter{Status: models.RequestPending, From: start, To: end})
	if err != nil {
		return err
	}
	v.Nodes, v.Models = filterNodes(nodes, shown, v.NodeID), gpuModels(nodes)
	in := views.GridInput{Nodes: shown, Bookings: bookings, Loc: p.Location, Start: start, Days: days,
		Step: max(h.Limits.Slot, weekGridStep), Now: p.Now, NodeID: v.NodeID, Model: v.Model, FreeSplit: 6, TickHours: 6,
		Tentative: pending, Overview: true, FreeOnly: v.FreeOnly, Collapse: v.Collapsed, Open: v.OpenSet()}
	if p.User != nil {
		in.ViewerID = p.User.ID
	}
	if v.View == views.ViewDay {
		in.FreeSplit, in.TickHours, in.Overview = 1, 1, false
		in.Step = max(h.Limits.Slot, minGridStep)
	}
	v.Grid = views.BuildGrid(in)
	return Render(c, http.StatusOK, views.CalendarPage(p, v))
}

// bookings loads what the grid draws. A collapsed calendar needs the
// range's bookings only for its open nodes (one query each) and, for the
// free counts of the others, only the bookings that cover ref: reading a
// week of 512 GPUs took seconds, nearly all of it SQL. A page of a large
// lab's nodes (v.Page) reads the bookings of the nodes shown only.
func (h *Calendar) bookings(c echo.Context, v views.CalendarView, shown []models.Node, start, end, ref time.Time) ([]models.Booking, error) {
	ctx := c.Request().Context()
	var page []int64 // nil: every node
	on := map[int64]bool{}
	if v.Page.Paged() {
		page = make([]int64, len(shown))
		for i, n := range shown {
			page[i] = n.ID
			on[n.ID] = true
		}
	}
	var open []int64
	for _, id := range v.Open {
		if (v.NodeID == 0 || id == v.NodeID) && (page == nil || on[id]) {
			open = append(open, id)
		}
	}
	if !v.Collapsed || len(open) > maxOpenQueries {
		return h.Store.Bookings(ctx, models.BookingFilter{From: start, To: end, NodeID: v.NodeID, NodeIDs: page})
	}
	out, err := h.Store.Bookings(ctx, models.BookingFilter{From: ref, To: ref.Add(time.Second), NodeID: v.NodeID, NodeIDs: page})
	if err != nil {
		return nil, err
	}
	seen := make(map[int64]bool, len(out))
	for _, b := range out {
		seen[b.ID] = true
	}
	for _, id := range open {
		more, err := h.Store.Bookings(ctx, models.BookingFilter{From: start, To: end, NodeID: id})
		if err != nil {
			return nil, err
		}
		for _, b := range more {
			if !seen[b.ID] {
				seen[b.ID] = true
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// maxOpenQueries bounds the queries per render: with more nodes open, one
// query for the whole range is cheaper.
const maxOpenQueries = 8

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// parseDate reads ?date=YYYY-MM-DD as a day in loc; anything else means today.
func parseDate(s string, now time.Time, loc *time.Location) time.Time {
	if d, err := time.ParseInLocation("2006-01-02", s, loc); err == nil && d.Year() >= 2000 && d.Year() <= 2200 {
		return d
	}
	n := now.In(loc)
	return time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
}

// gpuModels lists the GPU models of all nodes, sorted, for the filter.
func gpuModels(nodes []models.Node) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range nodes {
		for _, g := range n.GPUs {
			if !seen[g.Model] {
				seen[g.Model] = true
				out = append(out, g.Model)
			}
		}
	}
	sort.Strings(out)
	return out
}
