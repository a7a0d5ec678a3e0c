package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// SaveZone stores only the time zone: the one-click offer of the
// browser's zone (home page, profile) must not touch the language.
func (h *Profile) SaveZone(c echo.Context) error {
	ctx := c.Request().Context()
	u := *models.UserFromContext(ctx)
	u.TimeZone = strings.TrimSpace(c.FormValue("time_zone"))
	err := h.Store.UpdateUser(ctx, &u, Actor(c))
	if models.ErrorCode(err) == models.EINVALID {
		return h.render(c, http.StatusUnprocessableEntity, views.ProfileView{Language: u.Language, TimeZone: u.TimeZone, Errors: h.Translator(c).Fields(err)})
	}
	if err != nil {
		return err
	}
	c.SetRequest(c.Request().WithContext(models.WithUser(ctx, &u)))
	h.Flash(c, "ok", h.Translator(c).T("profile.zone_saved", "Zone", u.TimeZone))
	next := c.FormValue("next")
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) {
		next = "/"
	}
	return RedirectSeeOther(c, next)
}
