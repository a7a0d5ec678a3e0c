package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// askRemoveMember asks before a person leaves a team (and its quota and
// approvals); an unknown team or user is a 404.
func (h *Admin) askRemoveMember(c echo.Context, teamID, userID int64) (bool, error) {
	ctx := c.Request().Context()
	team, err := h.Store.Team(ctx, teamID)
	if err != nil {
		return false, err
	}
	u, err := h.Store.User(ctx, userID)
	if err != nil {
		return false, err
	}
	t := h.Translator(c)
	return h.confirmed(c, views.ConfirmView{Title: t.T("confirm.member_title", "Name", u.Name, "Team", team.Name),
		Text: t.T("confirm.member_text"), Button: t.T("admin.remove"), Back: "/admin/teams/" + itoa64(teamID)})
}

// askRemoveGroup asks before an IdP group stops giving its members a team.
func (h *Admin) askRemoveGroup(c echo.Context, id int64) (bool, error) {
	ms, err := h.Store.GroupMappings(c.Request().Context())
	if err != nil {
		return false, err
	}
	for _, m := range ms {
		if m.ID == id {
			t := h.Translator(c)
			return h.confirmed(c, views.ConfirmView{Title: t.T("confirm.group_title", "Group", m.Group, "Team", m.TeamName),
				Text: t.T("confirm.group_text"), Button: t.T("admin.remove"), Back: "/admin/groups"})
		}
	}
	return false, models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "group"))
}
