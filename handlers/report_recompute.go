package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// RecomputeWeek recomputes a closed week on an admin's explicit request
// (the button on the cluster page) and shows which users' figures changed,
// before and after. The store writes the new snapshot and its audit event
// in one transaction; without this, a frozen week never changes.
func (h *Reports) RecomputeWeek(c echo.Context) error {
	w, err := models.ParseWeek(c.FormValue("week"), h.Location)
	if err != nil {
		return err
	}
	if h.Now().Before(w.End) {
		return models.NewError(models.EINVALID, models.M("err.report_week_running", "Week", w.String()))
	}
	before, after, err := h.Store.RecomputeWeek(c.Request().Context(), w, h.Now(), h.Rules, Actor(c))
	if err != nil {
		return err
	}
	v := views.RecomputeView{Week: w, WasFrozen: before != nil, Changes: models.DiffWeeks(before, after)}
	return Render(c, http.StatusOK, views.RecomputePage(h.NewPage(c), v))
}
