package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// RecomputeWeek recomputes a closed week on an admin's explicit request
// (the button on the cluster page) and shows which users' figures changed,
// before and after: every cell the pages, exports and emails now show
// differently, in the admin's language. The store writes the new snapshot
// and its audit event (the same list) in one transaction; without this, a
// frozen week never changes.
func (h *Reports) RecomputeWeek(c echo.Context) error {
	w, err := models.ParseWeek(c.FormValue("week"), h.Location)
	if err != nil {
		return err
	}
	if h.Now().Before(w.End) {
		return models.NewError(models.EINVALID, models.M("err.report_week_running", "Week", w.String()))
	}
	before, _, changes, err := h.Store.RecomputeWeek(c.Request().Context(), w, h.Now(), h.Rules, Actor(c), views.WeekDiff(h.Translator(c)))
	if err != nil {
		return err
	}
	v := views.RecomputeView{Week: w, WasFrozen: before != nil, Changes: changes}
	return Render(c, http.StatusOK, views.RecomputePage(h.NewPage(c), v))
}
