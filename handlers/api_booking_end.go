package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// CancelBooking answers DELETE /api/v1/bookings/:id: a booking that has not
// started is cancelled (it stays on record, marked cancelled).
func (h *API) CancelBooking(c echo.Context) error { return h.endBooking(c, cancelling) }

// ReleaseBooking answers POST /api/v1/bookings/:id/release: an active
// booking ends now and its GPUs are free at once.
func (h *API) ReleaseBooking(c echo.Context) error { return h.endBooking(c, releasing) }

// endBooking ends the booking as e says and answers it as it now stands.
func (h *API) endBooking(c echo.Context, e bookingEnd) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	now := h.Now()
	b, err := e.store(h.Store, c.Request().Context(), id, u, now)
	if err != nil {
		return err
	}
	uuids, err := h.gpuUUIDs(c.Request().Context(), *b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toBookingJSON(b, now, uuids))
}
