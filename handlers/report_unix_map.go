package handlers

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// MapUnixName maps a Unix account that the cluster page lists as used by
// nobody to the user an admin picked, in one step: the name becomes one of
// the user's extra logins (audited, as "gpubook user set --unix-extra"
// does) and its stored use moves to them. Back to the cluster page's week.
func (h *Reports) MapUnixName(c echo.Context) error {
	id, err := strconv.ParseInt(c.FormValue("user_id"), 10, 64)
	if err != nil || id <= 0 {
		return models.NewError(models.EINVALID, models.M("err.unmapped_user_required"))
	}
	name := c.FormValue("name")
	ctx := c.Request().Context()
	moved, err := h.Store.MapUnixName(ctx, name, id, Actor(c))
	if err != nil {
		return err
	}
	u, err := h.Store.User(ctx, id)
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("unmapped.mapped", "Name", name, "User", u.Name, "Minutes", moved))
	to := "/admin/usage"
	if w, err := models.ParseWeek(c.FormValue("week"), h.Location); err == nil {
		to += "?week=" + w.String()
	}
	return RedirectSeeOther(c, to)
}
