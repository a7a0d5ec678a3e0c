package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// CancelBooking answers DELETE /api/v1/bookings/:id: a booking that has not
// started is cancelled (it stays on record, marked cancelled).
func (h *API) CancelBooking(c echo.Context) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	now := h.Now()
	b, err := h.Store.CancelBooking(c.Request().Context(), id, u, now)
	if err != nil {
		return err
	}
	uuids, err := h.gpuUUIDs(c.Request().Context(), *b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toBookingJSON(b, now, uuids))
}
