package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// ReleaseBooking answers POST /api/v1/bookings/:id/release: an active
// booking ends now and its GPUs are free at once.
func (h *API) ReleaseBooking(c echo.Context) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	now := h.Now()
	b, err := h.Store.ReleaseBooking(c.Request().Context(), id, u, now)
	if err != nil {
		return err
	}
	uuids, err := h.gpuUUIDs(c.Request().Context(), *b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toBookingJSON(b, now, uuids))
}
