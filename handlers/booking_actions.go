package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Extend moves a booking's end later, if its GPUs are free until then;
// otherwise the answer says until when they are.
func (h *Bookings) Extend(c echo.Context) error {
	loc := models.UserFromContext(c.Request().Context()).Location(h.Location)
	end, ok := parseFormTime(c.FormValue("ends_at"), loc)
	return h.change(c, "booking.extended_flash", func(id int64, u *models.User) (*models.Booking, error) {
		if !ok {
			return nil, models.FieldErrors{"ends_at": models.M("err.time_invalid")}.Err()
		}
		return h.Store.ExtendBooking(c.Request().Context(), id, u, end, h.Limits, h.Now())
	})
}

// UpdateNote changes a booking's note.
func (h *Bookings) UpdateNote(c echo.Context) error {
	return h.change(c, "booking.note_saved", func(id int64, u *models.User) (*models.Booking, error) {
		return h.Store.UpdateBookingNote(c.Request().Context(), id, u, c.FormValue("note"), h.Limits, h.Now())
	})
}

// change runs one action and answers: the row fragment for htmx, else a
// redirect with a flash; a refused action shows why beside its row (422
// for bad values, 409 when other bookings are in the way).
func (h *Bookings) change(c echo.Context, okKey string, do func(id int64, u *models.User) (*models.Booking, error)) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	u := models.UserFromContext(c.Request().Context())
	b, err := do(id, u)
	status := http.StatusOK
	switch models.ErrorCode(err) {
	case "":
	case models.EINVALID, models.EPOLICY:
		status = http.StatusUnprocessableEntity
	case models.ECONFLICT:
		status = http.StatusConflict
	default:
		return err // not found, not yours, internal: the error page
	}
	t, loc := h.Translator(c), u.Location(h.Location)
	msg := ""
	if err != nil {
		msg = problem(t.Msg, err, loc)
	}
	if !IsHTMX(c) {
		if err != nil {
			return h.renderList(c, status, 0, id, msg)
		}
		h.Flash(c, "ok", t.T(okKey, "End", b.EndsAt.In(loc).Format("2006-01-02 15:04 MST")))
		return RedirectSeeOther(c, "/bookings#booking-"+itoa64(id))
	}
	return h.renderRow(c, status, id, b, msg)
}

// problem translates an action's error, with its times in the viewer's zone.
func problem(tr func(models.Msg) string, err error, loc *time.Location) string {
	e := models.AsError(err)
	m := e.Msg
	if t, ok := m.Data["FreeUntil"].(time.Time); ok {
		m = models.M(m.Key, "FreeUntil", t.In(loc))
	}
	out := tr(m)
	for _, k := range []string{"ends_at", "note"} {
		if f, ok := e.Fields[k]; ok {
			out = tr(f)
		}
	}
	if e.Code == models.EPOLICY { // every rule the extension breaks
		for _, b := range BreachesOf(err) {
			out += " " + tr(b.Msg)
		}
	}
	return out
}

// renderRow answers htmx with the booking's row as it now stands.
func (h *Bookings) renderRow(c echo.Context, status int, id int64, b *models.Booking, msg string) error {
	if b == nil {
		var err error
		if b, err = h.Store.Booking(c.Request().Context(), id); err != nil {
			return err
		}
	}
	names, err := h.gpuNames(c.Request().Context())
	if err != nil {
		return err
	}
	p := h.NewPage(c)
	r := views.NewBookingRow(*b, names, h.Now(), p.Location)
	if msg != "" {
		r.Error = msg
		if typed := c.FormValue("ends_at"); typed != "" {
			r.ExtendTo = typed
		}
	}
	return Render(c, status, views.BookingRow(p, r))
}

// askFirst shows a confirmation page for an action that cannot be undone
// unless the form says confirm=yes (the page's own button, or htmx after
// its dialog). An action the rules refuse is not asked about: change then
// says why, as before.
func (h *Bookings) askFirst(c echo.Context, action string, check func(*models.Booking, *models.User, time.Time) error) (bool, error) {
	if c.FormValue("confirm") == "yes" {
		return false, nil
	}
	id, err := PathID(c, "id")
	if err != nil {
		return true, err
	}
	u := models.UserFromContext(c.Request().Context())
	b, err := h.Store.Booking(c.Request().Context(), id)
	if err != nil {
		return true, err
	}
	if check(b, u, h.Now()) != nil {
		return false, nil
	}
	names, err := h.gpuNames(c.Request().Context())
	if err != nil {
		return true, err
	}
	p := h.NewPage(c)
	r := views.NewBookingRow(*b, names, h.Now(), p.Location)
	return true, Render(c, http.StatusOK, views.ConfirmActionPage(p, action, r))
}
