package handlers

import (
	"sort"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// BookNow is the home page's one-click "book N GPUs of this model on this
// node now for H hours": it picks free GPUs and books them through the
// same path as the form, so limits, policies and conflicts are reported
// the same way (on the form, as typed).
func (h *Bookings) BookNow(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	loc := u.Location(h.Location)
	form, err := formParams(c)
	if err != nil {
		return err
	}
	now := h.Now().Truncate(time.Minute)
	f := views.BookingForm{Start: views.LocalInput(now, loc), Duration: form.Get("hours")}
	f.NodeID, _ = strconv.ParseInt(form.Get("node"), 10, 64)
	fe := models.FieldErrors{}
	count, err := strconv.Atoi(form.Get("count"))
	if err != nil || count < 1 {
		fe.Add("gpu_ids", models.M("err.gpus_required"))
	}
	d, ok := parseHours(f.Duration)
	if !ok {
		fe.Add("duration", models.M("err.slot_hours_invalid"))
	}
	if len(fe) > 0 {
		return h.refused(c, f, fe.Err())
	}
	unit := unitAsked{Model: form.Get("model"), Profile: form.Get("profile")}
	picked, err := h.pickFree(c, f.NodeID, unit, count, now, now.Add(d))
	if err != nil {
		return err
	}
	f.GPUIDs = picked
	if len(picked) < count {
		return h.noRoomNow(c, f, unit.Model, count, len(picked))
	}
	req := models.NewBooking{UserID: u.ID, GPUIDs: picked, StartsAt: now, EndsAt: now.Add(d)}
	b, err := h.Store.CreateBooking(ctx, req, h.Limits, h.Now(), Actor(c))
	if err != nil {
		return h.refused(c, f, err)
	}
	return h.created(c, b, loc)
}

// unitAsked is what "book now" books: whole GPUs of Model, or with a
// Profile, MIG instances of that profile on GPUs of Model.
type unitAsked struct{ Model, Profile string }

// fits reports whether g is such a unit: never a GPU split into instances.
func (u unitAsked) fits(g models.GPU) bool {
	return g.Model == u.Model && g.MIGProfile == u.Profile && g.IsMIGInstance() == (u.Profile != "") && !g.IsMIGParent()
}

// pickFree chooses up to count units of the kind asked on the node: first
// those free for all of [from, to), then those free now but booked later
// (the booking then reports that conflict as the form would).
func (h *Bookings) pickFree(c echo.Context, nodeID int64, unit unitAsked, count int, from, to time.Time) ([]int64, error) {
	ctx := c.Request().Context()
	n, err := h.Store.Node(ctx, nodeID)
	if err != nil {
		return nil, err
	}
	bs, err := h.Store.Bookings(ctx, models.BookingFilter{NodeID: n.ID, From: from, To: to})
	if err != nil {
		return nil, err
	}
	var whole, part []int64
	for _, s := range models.GPUStates(n.GPUs, bs, from, to) {
		switch {
		case !unit.fits(s.GPU) || !s.GPU.InService:
		case s.Busy == nil:
			whole = append(whole, s.GPU.ID)
		case s.Busy.StartsAt.After(from):
			part = append(part, s.GPU.ID)
		}
	}
	picked := append(whole, part...)
	if len(picked) > count {
		picked = picked[:count]
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i] < picked[j] })
	return picked, nil
}
