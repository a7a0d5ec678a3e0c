package handlers

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// ReportEmailStore reads and writes the weekly email preference.
type ReportEmailStore interface {
	ReportEmail(ctx context.Context, userID int64) (bool, error)
	SetReportEmail(ctx context.Context, userID int64, on bool) error
}

func reportEmailStore(s Store) (ReportEmailStore, error) {
	rs, ok := s.(ReportEmailStore)
	if !ok {
		return nil, models.Internal(fmt.Errorf("handlers: the store keeps no email preferences"))
	}
	return rs, nil
}

// ReportEmailOn reports whether user uid receives the weekly report
// email, for the profile page's checkbox.
func ReportEmailOn(ctx context.Context, s Store, uid int64) (bool, error) {
	rs, err := reportEmailStore(s)
	if err != nil {
		return false, err
	}
	return rs.ReportEmail(ctx, uid)
}

// SaveEmailPref stores the profile page's weekly-email checkbox.
func (h *Reports) SaveEmailPref(c echo.Context) error {
	ctx := c.Request().Context()
	rs, err := reportEmailStore(h.Store)
	if err != nil {
		return err
	}
	u := models.UserFromContext(ctx)
	if err := rs.SetReportEmail(ctx, u.ID, c.FormValue("report_email") == "on"); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/profile#email")
}
