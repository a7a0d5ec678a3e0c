package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Usage renders "My usage" (/usage): the signed-in user's report for
// ?week= (default: this week so far), or one of its tables as CSV.
func (h *Reports) Usage(c echo.Context) error {
	d, err := h.weekData(c)
	if err != nil {
		return err
	}
	u := models.UserFromContext(c.Request().Context())
	v := views.UsageView{Report: d.UserReport(*u), Weeks: h.weeks(), Status: views.StatusOf(d),
		Path: c.Request().URL.Path, LeadOf: d.LeadOf(u.ID)}
	if wantsCSV(c) {
		t := h.Translator(c)
		return writeCSV(c, "usage-"+d.Week.String(), views.FiguresTable(t, v.Report), views.DaysTable(t, v.Report.Days),
			views.TrendTable(t, v.Report.Trend), views.HeatTable(t, v.Report.Heat))
	}
	return Render(c, http.StatusOK, views.UsagePage(h.NewPage(c), v))
}
