package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Bookings serves the booking pages: the form, my bookings and their actions.
type Bookings struct{ *Base }

// sessionLastNote remembers the last note so that the next form offers it
// again: retyping the same note for every booking is what people
// complain about first.
const sessionLastNote = "booking_last_note"

// parseFormTime reads a time from a link (RFC 3339, with or without
// seconds) or from a datetime-local input, which is in the viewer's zone.
func parseFormTime(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 40 {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// formParams is the request's form; a body that cannot be parsed is a bad
// request, not an empty form that then reports every field missing.
func formParams(c echo.Context) (url.Values, error) {
	form, err := c.FormParams()
	if err != nil {
		return nil, models.NewError(models.EINVALID, models.M("err.bad_request"))
	}
	return form, nil
}

// bookingForm reads the booking fields (gpu, starts_at, ends_at or
// duration, note) of a form or link query: as typed, for showing again,
// and as u's request with times in loc; every problem goes in the errors.
func bookingForm(vals url.Values, u *models.User, loc *time.Location) (views.BookingForm, models.NewBooking, models.FieldErrors) {
	f := views.BookingForm{Start: vals.Get("starts_at"), End: vals.Get("ends_at"), Duration: vals.Get("duration"), Note: vals.Get("note")}
	fe := models.FieldErrors{}
	f.GPUIDs = parseIDs(vals["gpu"], "gpu_ids", fe)
	f.NodeID, _ = strconv.ParseInt(vals.Get("node"), 10, 64)
	req := parseRange(f, loc, fe)
	req.UserID, req.GPUIDs, req.Note = u.ID, f.GPUIDs, f.Note
	return f, req, fe
}

// parseIDs reads repeated numeric values (?gpu=1&gpu=2); a bad one is a problem for field.
func parseIDs(vals []string, field string, fe models.FieldErrors) []int64 {
	var ids []int64
	for _, v := range vals {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || id <= 0 {
			fe.Add(field, models.M("err.gpu_id_invalid"))
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// parseHours reads a duration in hours ("4", "1.5").
func parseHours(s string) (time.Duration, bool) {
	h, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(h > 0 && h <= 24*366) { // also refuses NaN
		return 0, false
	}
	return time.Duration(h * float64(time.Hour)).Round(time.Minute), true
}

// pickNode is the node the form offers GPUs of: the first chosen GPU's,
// else the one asked for, else the only one.
func pickNode(nodes []models.Node, nodeID int64, gpuIDs []int64) *models.Node {
	for i := range nodes {
		for _, g := range nodes[i].GPUs {
			if len(gpuIDs) > 0 && g.ID == gpuIDs[0] {
				return &nodes[i]
			}
		}
	}
	for i := range nodes {
		if nodes[i].ID == nodeID {
			return &nodes[i]
		}
	}
	if len(nodes) >= 1 {
		return &nodes[0]
	}
	return nil
}

// renderForm shows the booking form with status, loading the nodes once.
func (h *Bookings) renderForm(c echo.Context, status int, v views.BookingFormView) error {
	if err := h.formNode(c, &v); err != nil {
		return err
	}
	return Render(c, status, views.BookingFormPage(h.NewPage(c), v))
}

// formNode picks the node the form offers and each of its GPUs' state
// over the typed range, so that a taken GPU shows before submitting.
func (h *Bookings) formNode(c echo.Context, v *views.BookingFormView) error {
	ctx := c.Request().Context()
	nodes, err := h.Store.Nodes(ctx)
	if err != nil {
		return err
	}
	v.Nodes = nodes
	v.Node = pickNode(nodes, v.Form.NodeID, v.Form.GPUIDs)
	if v.Node == nil {
		return nil
	}
	u := models.UserFromContext(ctx)
	req := parseRange(v.Form, u.Location(h.Location), models.FieldErrors{})
	var bs []models.Booking
	if v.Ranged = !req.StartsAt.IsZero() && req.EndsAt.After(req.StartsAt); v.Ranged {
		// Later bookings too, up to a day on: "free until" needs them.
		f := models.BookingFilter{NodeID: v.Node.ID, From: req.StartsAt, To: req.EndsAt.Add(24 * time.Hour)}
		if bs, err = h.Store.Bookings(ctx, f); err != nil {
			return err
		}
	}
	v.States = models.GPUStates(v.Node.GPUs, bs, req.StartsAt, req.EndsAt)
	return nil
}

// GPUStates answers the booking form's GPU boxes for the range as typed
// (htmx, on a change of start, end or duration); always 200.
func (h *Bookings) GPUStates(c echo.Context) error {
	form, err := formParams(c)
	if err != nil {
		return err
	}
	u := models.UserFromContext(c.Request().Context())
	f, _, _ := bookingForm(form, u, u.Location(h.Location))
	v := views.BookingFormView{Form: f}
	if err := h.formNode(c, &v); err != nil {
		return err
	}
	if v.Node == nil {
		return c.NoContent(http.StatusNoContent)
	}
	return Render(c, http.StatusOK, views.GPUPicks(h.NewPage(c), v))
}

// conflictLines turns the store's conflicts into lines the form shows.
func conflictLines(cs []models.Conflict) []views.ConflictLine {
	out := make([]views.ConflictLine, len(cs))
	for i, cf := range cs {
		out[i] = views.ConflictLine{GPU: cf.GPUName, UserName: cf.UserName, Start: cf.StartsAt, Stop: cf.EndsAt}
	}
	return out
}
