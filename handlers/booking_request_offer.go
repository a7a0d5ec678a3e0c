package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// noRoomNow refuses "book now" for want of free GPUs as before (how many
// are free, beside the GPUs) and offers a priority request for count GPUs
// of the model on the node, the free ones first, for the hours asked.
func (h *Bookings) noRoomNow(c echo.Context, f views.BookingForm, model string, count, free int) error {
	t := h.Translator(c)
	fe := models.FieldErrors{}
	fe.Add("gpu_ids", models.M("home.quick_not_enough", "Count", free))
	v := views.BookingFormView{Form: f, Errors: t.Fields(fe.Err()), Message: t.Msg(models.M("booking.problems"))}
	url, err := h.requestOffer(c, f, model, count)
	if err != nil {
		return err
	}
	v.RequestURL = url
	return h.renderForm(c, http.StatusUnprocessableEntity, v)
}

// requestOffer is the link to a priority request for count GPUs of model
// (on f's node when it names one) over f's range, preferring f's GPUs;
// "" when no node has that many.
func (h *Bookings) requestOffer(c echo.Context, f views.BookingForm, model string, count int) (string, error) {
	gpus, err := h.Store.GPUs(c.Request().Context())
	if err != nil {
		return "", err
	}
	node, ids := models.GPUsToRequest(gpus, f.NodeID, model, count, f.GPUIDs)
	if ids == nil {
		return "", nil
	}
	f.NodeID, f.GPUIDs = node, ids
	return views.RequestLink(f), nil
}

// slotsRequestOffer offers a priority request from find-a-slot when no
// option starts when asked (none at all, or only later ones): the GPUs
// asked for, from the time asked (or now) for the hours asked. A search
// for MIG slices (a profile) gets no offer but a note that says why:
// a priority request asks for whole GPUs (models.GPUsToRequest), so the
// request would be for something other than what was searched.
func (h *Bookings) slotsRequestOffer(c echo.Context, v *views.SlotsView, q models.SlotQuery) error {
	start := q.After
	if now := h.Now().Truncate(time.Minute); start.Before(now) {
		start = now
	}
	if len(v.Results) > 0 && !v.Results[0].StartsAt.After(nextSlot(start, h.Limits.Slot)) {
		return nil // the first option is when asked (or the next slot): there is room
	}
	if q.Profile != "" {
		v.NoSliceRequest = true
		return nil
	}
	loc := models.UserFromContext(c.Request().Context()).Location(h.Location)
	f := views.BookingForm{Start: views.LocalInput(start, loc), Duration: v.Form.Hours}
	url, err := h.requestOffer(c, f, q.Model, q.GPUs)
	v.RequestURL = url
	return err
}
