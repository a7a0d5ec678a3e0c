package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// CreateBooking answers POST /api/v1/bookings: 201 with the booking, 409
// with the bookings in the way, or 422 with every problem by field.
func (h *API) CreateBooking(c echo.Context) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	body, err := readAPIBody(c)
	if err != nil {
		return err
	}
	req, err := parseBookingRequest(body, h.Limits)
	if err != nil {
		return err
	}
	req.UserID = u.ID
	now := h.Now()
	b, err := h.Store.CreateBooking(c.Request().Context(), req, h.Limits, now, Actor(c))
	if err != nil {
		return err
	}
	uuids, err := h.gpuUUIDs(c.Request().Context(), *b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toBookingJSON(b, now, uuids))
}
