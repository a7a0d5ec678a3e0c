package handlers

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// New shows the booking form, pre-filled from a calendar cell or a drag:
// /bookings/new?gpu=1&gpu=2&start=…&end=…. Bad values are dropped, not fatal.
func (h *Bookings) New(c echo.Context) error {
	loc := models.UserFromContext(c.Request().Context()).Location(h.Location)
	q := c.QueryParams()
	f := views.BookingForm{GPUIDs: parseIDs(q["gpu"], "gpu_ids", models.FieldErrors{})}
	f.NodeID, _ = strconv.ParseInt(c.QueryParam("node"), 10, 64)
	now := h.Now()
	start, ok := parseFormTime(c.QueryParam("start"), loc)
	if !ok || start.Before(now) {
		start = nextSlot(now, h.Limits.Slot)
		if ok {
			start = now // a cell that began in the past: book from now
		}
	}
	end, ok := parseFormTime(c.QueryParam("end"), loc)
	if !ok || !end.After(start) {
		end = start.Add(time.Hour)
	}
	if slot := h.Limits.Slot; end.Sub(start) < slot {
		// The free cell that holds now ends at the next split (22:39 to
		// 23:00): offer the shortest booking allowed instead of a refusal.
		end = nextSlot(start.Add(slot), slot)
	}
	f.Start, f.End = views.LocalInput(start, loc), views.LocalInput(end, loc)
	f.Note = h.Sessions.GetString(c.Request().Context(), sessionLastNote)
	return h.renderForm(c, http.StatusOK, views.BookingFormView{Form: f})
}

// nextSlot is the first slot boundary after now (Unix-aligned: whole and
// half hours in ordinary zones).
func nextSlot(now time.Time, slot time.Duration) time.Time {
	if slot <= 0 {
		slot = 30 * time.Minute
	}
	t := now.Truncate(slot)
	if t.Before(now) {
		t = t.Add(slot)
	}
	return t
}
