package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// ExtendBooking answers POST /api/v1/bookings/:id/extend {"ends_at": …}.
// When the GPUs are taken later on, the 409 says until when they are free.
func (h *API) ExtendBooking(c echo.Context) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	body, err := readAPIBody(c)
	if err != nil {
		return err
	}
	end, err := parseExtendRequest(body)
	if err != nil {
		return err
	}
	now := h.Now()
	b, err := h.Store.ExtendBooking(c.Request().Context(), id, u, end, h.Limits, now)
	if err != nil {
		return errInZone(err, u.Location(h.Location))
	}
	uuids, err := h.gpuUUIDs(c.Request().Context(), *b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toBookingJSON(b, now, uuids))
}
