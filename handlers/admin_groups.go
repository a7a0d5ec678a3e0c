package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Groups lists the SSO group → team mappings.
func (h *Admin) Groups(c echo.Context) error {
	return h.renderGroups(c, http.StatusOK, views.AdminGroupsView{Form: models.GroupMapping{Role: models.RoleMember}})
}

func (h *Admin) renderGroups(c echo.Context, status int, v views.AdminGroupsView) error {
	ctx := c.Request().Context()
	var err error
	if v.Mappings, err = h.Store.GroupMappings(ctx); err != nil {
		return err
	}
	if v.Teams, err = h.Store.Teams(ctx); err != nil {
		return err
	}
	v.TeamPrefix, v.LeadSuffix = h.GroupPrefix, h.GroupLeadSuffix
	return Render(c, status, views.AdminGroupsPage(h.NewPage(c), v))
}

// CreateGroup adds a mapping.
func (h *Admin) CreateGroup(c echo.Context) error {
	teamID, _ := strconv.ParseInt(c.FormValue("team_id"), 10, 64)
	g := models.GroupMapping{Group: c.FormValue("group"), TeamID: teamID, Role: c.FormValue("role")}
	err := h.Store.CreateGroupMapping(c.Request().Context(), &g, Actor(c))
	if code := models.ErrorCode(err); code == models.EINVALID || code == models.ECONFLICT {
		t := h.Translator(c)
		errs := t.Fields(err)
		if code == models.ECONFLICT {
			errs = map[string]string{"group": t.Err(err)}
		}
		return h.renderGroups(c, http.StatusUnprocessableEntity, views.AdminGroupsView{Form: g, Errors: errs})
	}
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/admin/groups")
}

// RemoveGroup deletes a mapping.
func (h *Admin) RemoveGroup(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	if ok, err := h.askRemoveGroup(c, id); !ok {
		return err
	}
	if err := h.Store.DeleteGroupMapping(c.Request().Context(), id, Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/admin/groups")
}
