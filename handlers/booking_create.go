package handlers

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Create books GPUs from the form. It confirms with a redirect to the
// calendar, or re-renders the form with every problem beside its field and
// nothing written: 422 for bad values, 409 when other bookings are in the way.
func (h *Bookings) Create(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	loc := u.Location(h.Location)
	form, err := formParams(c)
	if err != nil {
		return err
	}
	f, req, fe := bookingForm(form, u, loc)
	if len(fe) > 0 {
		err = h.allProblems(c, req, fe)
	} else {
		var b *models.Booking
		if b, err = h.Store.CreateBooking(ctx, req, h.Limits, h.Now(), Actor(c)); err == nil {
			return h.created(c, b, loc)
		}
	}
	return h.refused(c, f, err)
}

// refused shows the form again as typed with why the booking was not
// made: 422 for bad values or a policy, 409 when other bookings are in
// the way (with a priority request for the same offered); anything else
// is the error page.
func (h *Bookings) refused(c echo.Context, f views.BookingForm, err error) error {
	t := h.Translator(c)
	v := views.BookingFormView{Form: f, Errors: t.Fields(err), Message: t.Msg(models.M("booking.problems"))}
	switch models.ErrorCode(err) {
	case models.EINVALID:
		return h.renderForm(c, http.StatusUnprocessableEntity, v)
	case models.ECONFLICT: // no room: say who is in the way, offer a priority request
		v.Message, v.Conflicts = t.Err(err), conflictLines(models.AsError(err).Conflicts)
		v.RequestURL = views.RequestLink(f)
		return h.renderForm(c, http.StatusConflict, v)
	case models.EPOLICY: // outside policy: say why, offer a priority request
		v.Message, v.Errors = t.Err(err), nil
		v.Policy = views.PolicyCheckView{Checked: true, Breaches: BreachesOf(err), Request: views.RequestLink(f)}
		return h.renderForm(c, http.StatusUnprocessableEntity, v)
	}
	return err
}

// parseRange reads start and end (or start and duration) in the viewer's zone.
func parseRange(f views.BookingForm, loc *time.Location, fe models.FieldErrors) models.NewBooking {
	var req models.NewBooking
	var ok bool
	if strings.TrimSpace(f.Start) != "" {
		if req.StartsAt, ok = parseFormTime(f.Start, loc); !ok {
			fe.Add("starts_at", models.M("err.time_invalid"))
		}
	}
	switch {
	case strings.TrimSpace(f.End) != "":
		if req.EndsAt, ok = parseFormTime(f.End, loc); !ok {
			fe.Add("ends_at", models.M("err.time_invalid"))
		}
	case strings.TrimSpace(f.Duration) != "":
		d, ok := parseHours(f.Duration)
		if !ok {
			fe.Add("duration", models.M("err.slot_hours_invalid"))
		} else if !req.StartsAt.IsZero() {
			req.EndsAt = req.StartsAt.Add(d)
		}
	}
	return req
}

// allProblems adds the rules' verdict on the fields that did parse, so that
// the form shows every problem at once, not the unreadable ones first.
func (h *Bookings) allProblems(c echo.Context, req models.NewBooking, fe models.FieldErrors) error {
	gpus, err := h.Store.GPUs(c.Request().Context())
	if err != nil {
		return err
	}
	byID := make(map[int64]models.GPU, len(gpus))
	for _, g := range gpus {
		byID[g.ID] = g
	}
	if _, err := models.ValidateNewBooking(req, byID, h.Limits, h.Now()); err != nil {
		for k, m := range models.AsError(err).Fields {
			if _, bad := fe["duration"]; k == "ends_at" && bad {
				continue // "end required" would hide that the duration is unreadable
			}
			fe.Add(k, m)
		}
	}
	return fe.Err()
}

// created confirms a booking and shows it on the calendar. The booking is
// made by then, so a failed read of the GPU names only shortens the flash.
func (h *Bookings) created(c echo.Context, b *models.Booking, loc *time.Location) error {
	ctx := c.Request().Context()
	p := &views.Page{T: h.Translator(c), Location: loc}
	h.Sessions.Put(ctx, sessionLastNote, b.Note)
	gpus := ""
	if names, err := h.gpuNames(ctx); err != nil {
		slog.WarnContext(ctx, "booking created: GPU names for the flash", "booking_id", b.ID, "err", err)
	} else {
		gpus = views.GPUNames(b.GPUIDs, names)
	}
	h.Flash(c, "ok", p.Tr("booking.created", "GPUs", gpus, "Node", b.NodeName,
		"When", p.DateTime(b.StartsAt)+" – "+p.DateTime(b.EndsAt)))
	return RedirectSeeOther(c, "/calendar?date="+b.StartsAt.In(loc).Format("2006-01-02"))
}
