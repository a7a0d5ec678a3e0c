package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Users lists users with their teams.
func (h *Admin) Users(c echo.Context) error {
	ctx := c.Request().Context()
	users, err := h.Store.Users(ctx)
	if err != nil {
		return err
	}
	v := views.AdminUsersView{Users: users, Teams: map[int64][]models.Membership{}}
	ms, err := h.Store.AllMemberships(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		v.Teams[m.UserID] = append(v.Teams[m.UserID], m)
	}
	return Render(c, http.StatusOK, views.AdminUsersPage(h.NewPage(c), v))
}

// SetAdmin grants or removes the admin role. An admin cannot remove their
// own, so that a portal is never left without one by a slip.
func (h *Admin) SetAdmin(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	admin, perr := strconv.ParseBool(c.FormValue("admin"))
	if perr != nil {
		return models.NewError(models.EINVALID, models.M("err.bad_request"))
	}
	if me := models.UserFromContext(c.Request().Context()); me.ID == id && !admin {
		return models.NewError(models.EINVALID, models.M("admin.err.self_demote"))
	}
	if err := h.Store.SetAdmin(c.Request().Context(), id, admin, Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/admin/users")
}
