package handlers

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// bookingEnd is all that tells cancelling a booking from releasing it:
// both end a booking early by the same steps, on the page and in the API,
// so each is one of these values handed to one function.
type bookingEnd struct {
	action string // the confirmation page's verb
	flash  string // the page's message once done
	check  func(*models.Booking, *models.User, time.Time) error
	store  func(Store, context.Context, int64, *models.User, time.Time) (*models.Booking, error)
}

var (
	// cancelling: a booking that has not started, kept on record as cancelled.
	cancelling = bookingEnd{"cancel", "booking.cancelled_flash", models.CheckCancel, Store.CancelBooking}
	// releasing: an active booking ends now and its GPUs are free at once.
	releasing = bookingEnd{"release", "booking.released_flash", models.CheckRelease, Store.ReleaseBooking}
)

// Cancel cancels an upcoming booking: all its GPUs at once, once confirmed.
func (h *Bookings) Cancel(c echo.Context) error { return h.end(c, cancelling) }

// Release ends an active booking now, so that its GPUs are free at once,
// once confirmed.
func (h *Bookings) Release(c echo.Context) error { return h.end(c, releasing) }

// end asks first (askFirst), then ends the booking as e says.
func (h *Bookings) end(c echo.Context, e bookingEnd) error {
	if asked, err := h.askFirst(c, e.action, e.check); asked || err != nil {
		return err
	}
	return h.change(c, e.flash, func(id int64, u *models.User) (*models.Booking, error) {
		return e.store(h.Store, c.Request().Context(), id, u, h.Now())
	})
}
