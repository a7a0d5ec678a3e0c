package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// TeamUsage renders a team's table (/usage/team/:id) for its leads and admins.
func (h *Reports) TeamUsage(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	u := models.UserFromContext(ctx)
	mine, err := h.Store.MembershipsOf(ctx, u.ID)
	if err != nil {
		return err
	}
	if !models.CanSeeTeamUsage(u, id, mine) {
		return models.NewError(models.EFORBIDDEN, models.M("err.forbidden"))
	}
	team, err := h.Store.Team(ctx, id)
	if err != nil {
		return err
	}
	d, err := h.weekData(c)
	if err != nil {
		return err
	}
	v := views.TeamUsageView{Team: *team, Week: d.Week, Rows: d.TeamTable(id), Weeks: h.weeks(), Path: c.Request().URL.Path,
		Status: views.StatusOf(d)}
	if wantsCSV(c) {
		return writeCSV(c, "team-"+itoa64(id)+"-"+d.Week.String(), views.MembersTable(h.Translator(c), "members", v.Rows))
	}
	return Render(c, http.StatusOK, views.TeamUsagePage(h.NewPage(c), v))
}
