package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// Watch records "notify me when this frees" for each GPU of the form over
// its range; a job mails the user once none of it is booked any more.
func (h *Priority) Watch(c echo.Context) error {
	form, err := formParams(c)
	if err != nil {
		return err
	}
	f, req, fe := h.readForm(c, form)
	if err := fe.Err(); err != nil {
		return err
	}
	if len(f.GPUIDs) == 0 {
		return models.FieldErrors{"gpu_ids": models.M("err.gpus_required")}.Err()
	}
	for _, id := range f.GPUIDs {
		w := &models.Watch{UserID: req.UserID, GPUID: id, StartsAt: req.StartsAt, EndsAt: req.EndsAt}
		if err := h.Store.CreateWatch(c.Request().Context(), w, h.Now(), Actor(c)); err != nil {
			return err
		}
	}
	h.Flash(c, "ok", h.Translator(c).T("policy.watch_saved"))
	return RedirectSeeOther(c, "/calendar?date="+req.StartsAt.In(models.UserFromContext(c.Request().Context()).Location(h.Location)).Format("2006-01-02"))
}
