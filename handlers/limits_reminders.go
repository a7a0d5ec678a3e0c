package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// SaveReminders stores the profile page's reminders checkbox.
func (h *Policies) SaveReminders(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	if err := h.Store.SetNotifyReminders(ctx, u.ID, c.FormValue("notify_reminders") == "on", Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/profile#reminders")
}
