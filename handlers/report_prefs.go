package handlers

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// ReportEmailOn reports whether user uid receives the weekly report
// email, for the profile page's checkbox.
func ReportEmailOn(ctx context.Context, s Store, uid int64) (bool, error) {
	return s.ReportEmail(ctx, uid)
}

// SaveEmailPref stores the profile page's weekly-email checkbox.
func (h *Reports) SaveEmailPref(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	if err := h.Store.SetReportEmail(ctx, u.ID, c.FormValue("report_email") == "on"); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/profile#email")
}
