package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Status serves the live status page and each user's violation page.
type Status struct{ *Base }

// Show renders every GPU as the agents last reported it. Above
// views.CollapseAbove GPU rows the page opens collapsed, a row per node,
// and reads the minutes only of the nodes opened (?open=ID, repeatable;
// ?open=all opens every node), as the calendar does. Above
// views.NodesPerPage nodes it shows them a page at a time (?page=N) and
// reads the bookings and minutes of that page's nodes only.
func (h *Status) Show(c echo.Context) error {
	ctx := c.Request().Context()
	now := h.Now()
	var v views.StatusView
	v.Open, v.OpenAll = parseOpen(c.QueryParams()["open"])
	nodes, err := h.Store.Nodes(ctx)
	if err != nil {
		return err
	}
	v.Collapsed = !v.OpenAll && gpuCount(nodes, 0, "") > views.CollapseAbove
	scope := models.LiveScope{All: !v.Collapsed, Nodes: v.Open}
	if v.Page = views.PageNodes(len(nodes), views.ParsePage(c.QueryParam("page"))); v.Page.Paged() {
		for _, n := range views.OnPage(v.Page, nodes) {
			scope.Page = append(scope.Page, n.ID)
		}
	}
	in, err := h.Store.LiveInputs(ctx, now, scope)
	if err != nil {
		return err
	}
	v.Nodes = models.BuildLiveStatus(in, now)
	return Render(c, http.StatusOK, views.StatusPage(h.NewPage(c), v))
}

// MyViolations lists the signed-in user's violations (by gpubook user, or
// by one of their unix names) and their bookings' idle reports.
func (h *Status) MyViolations(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	x, err := h.Store.UnixIdentity(ctx, u.ID)
	if err != nil {
		return err
	}
	names := append([]string{u.UnixLogin()}, x.Extra...)
	vs, err := h.Store.Violations(ctx, models.ViolationFilter{UserID: u.ID, UserNames: names, Limit: 200})
	if err != nil {
		return err
	}
	idle, err := h.Store.IdleReports(ctx, models.IdleFilter{UserID: u.ID, Limit: 200})
	if err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.ViolationsPage(h.NewPage(c), views.ViolationsView{Violations: vs, Idle: idle}))
}
