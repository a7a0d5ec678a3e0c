package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// ImportForm shows the admins' booking import page (/admin/import).
func (h *Admin) ImportForm(c echo.Context) error {
	return Render(c, http.StatusOK, views.ImportPage(h.NewPage(c), views.ImportView{}))
}

// ImportBookings takes an uploaded CSV of past and future bookings and
// imports it like "gpubook import bookings": one transaction, all or
// nothing unless the box is ticked, every rejected line listed with its
// reason in the viewer's language.
func (h *Admin) ImportBookings(c echo.Context) error {
	fh, err := c.FormFile("file")
	if err != nil {
		return models.NewError(models.EINVALID, models.M("import.no_file"))
	}
	if fh.Size > models.MaxImportBytes {
		return models.NewError(models.EINVALID, models.M("err.import_too_large", "MB", models.MaxImportBytes>>20))
	}
	f, err := fh.Open()
	if err != nil {
		return err
	}
	defer f.Close()
	rows, bad, err := h.Limits.ImportRules(h.Location, h.Now()).Parse(f)
	if err != nil {
		return err
	}
	skip := c.FormValue("skip_bad") != ""
	res, err := h.Store.ImportBookings(c.Request().Context(), rows, bad, skip, h.Now(), Actor(c))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if !res.Written {
		status = http.StatusUnprocessableEntity
	}
	return Render(c, status, views.ImportPage(h.NewPage(c), views.ImportView{Result: &res, SkipBad: skip}))
}
