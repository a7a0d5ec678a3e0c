package handlers

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/api"
)

// maxListRange bounds GET /api/v1/bookings: two months is a long calendar,
// and a bound keeps one call from reading the whole history.
const maxListRange = 62 * 24 * time.Hour

// ListBookings answers GET /api/v1/bookings?from&to[&gpu][&mine=true]: the
// bookings that overlap [from, to), by start. Everyone sees every booking,
// as on the calendar; cancelled ones are left out.
func (h *API) ListBookings(c echo.Context) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	f, err := parseBookingQuery(c, u)
	if err != nil {
		return err
	}
	bs, err := h.Store.Bookings(c.Request().Context(), f)
	if err != nil {
		return err
	}
	uuids, err := h.gpuUUIDs(c.Request().Context(), bs...)
	if err != nil {
		return err
	}
	now := h.Now()
	out := api.BookingList{Bookings: make([]api.Booking, len(bs))}
	for i := range bs {
		out.Bookings[i] = toBookingJSON(&bs[i], now, uuids)
	}
	return c.JSON(http.StatusOK, out)
}

func parseBookingQuery(c echo.Context, u *models.User) (models.BookingFilter, error) {
	fe := models.FieldErrors{}
	var f models.BookingFilter
	f.From = queryTime(c, "from", true, fe)
	f.To = queryTime(c, "to", true, fe)
	if !f.From.IsZero() && !f.To.IsZero() {
		switch {
		case !f.To.After(f.From):
			fe.Add("to", models.M("err.end_before_start"))
		case f.To.Sub(f.From) > maxListRange:
			fe.Add("to", models.M("err.range_too_long", "Days", int(maxListRange/(24*time.Hour))))
		}
	}
	if s := c.QueryParam("gpu"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			fe.Add("gpu", models.M("err.gpu_id_invalid"))
		}
		f.GPUID = id
	}
	switch c.QueryParam("mine") {
	case "", "false":
	case "true":
		f.UserID = u.ID
	default:
		fe.Add("mine", models.M("err.bool_invalid"))
	}
	return f, fe.Err()
}

// queryTime reads an RFC 3339 query parameter.
func queryTime(c echo.Context, name string, required bool, fe models.FieldErrors) time.Time {
	s := c.QueryParam(name)
	if s == "" {
		if required {
			fe.Add(name, models.M("err.time_invalid"))
		}
		return time.Time{}
	}
	t, msg := ParseAPITime(s)
	if msg != nil {
		fe.Add(name, *msg)
	}
	return t
}
