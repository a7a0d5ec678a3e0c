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
	v.NodeID, _ = strconv.ParseInt(c.QueryParam("node"), 10, 64)
	ctx := c.Request().Context()
	nodes, err := h.Store.Nodes(ctx)
	if err != nil {
		return err
	}
	start, days := views.CalendarRange(v.View, v.Date, p.Location)
	end := start.AddDate(0, 0, days)
	bookings, err := h.Store.Bookings(ctx, models.BookingFilter{From: start, To: end, NodeID: v.NodeID})
	if err != nil {
		return err
	}
	pending, err := h.Store.Requests(ctx, models.RequestFilter{Status: models.RequestPending, From: start, To: end})
	if err != nil {
		return err
	}
	v.Nodes, v.Models = nodes, gpuModels(nodes)
	in := views.GridInput{Nodes: nodes, Bookings: bookings, Loc: p.Location, Start: start, Days: days,
		Step: max(h.Limits.Slot, minGridStep), Now: p.Now, NodeID: v.NodeID, Model: v.Model, FreeSplit: 6, TickHours: 6,
		Tentative: pending}
	if p.User != nil {
		in.ViewerID = p.User.ID
	}
	if v.View == views.ViewDay {
		in.FreeSplit, in.TickHours = 1, 1
	}
	v.Grid = views.BuildGrid(in)
	return Render(c, http.StatusOK, views.CalendarPage(p, v))
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
