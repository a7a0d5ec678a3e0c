package handlers

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// pastWindow is one page of past bookings: those that ended in 30 days.
const pastWindow = 30 * 24 * time.Hour

// List shows the viewer's active, upcoming and past bookings.
func (h *Bookings) List(c echo.Context) error {
	page, _ := strconv.Atoi(c.QueryParam("page"))
	return h.renderList(c, http.StatusOK, max(0, min(page, 1000)), 0, "")
}

// renderList renders the page; errFor and msg put a failed action's
// problem beside its booking. Three queries: GPUs, current, one past window.
func (h *Bookings) renderList(c echo.Context, status, page int, errFor int64, msg string) error {
	ctx := c.Request().Context()
	p := h.NewPage(c)
	names, err := h.gpuNames(ctx)
	if err != nil {
		return err
	}
	now := h.Now()
	current, err := h.Store.Bookings(ctx, models.BookingFilter{UserID: p.User.ID, From: now})
	if err != nil {
		return err
	}
	v := views.MyBookingsView{Page: page, PastTo: now.Add(-time.Duration(page) * pastWindow), Show: views.BookingShow(c.QueryParam("show"))}
	v.PastFrom = v.PastTo.Add(-pastWindow)
	past, err := h.Store.Bookings(ctx, models.BookingFilter{UserID: p.User.ID, From: v.PastFrom, To: v.PastTo, IncludeCancelled: true})
	if err != nil {
		return err
	}
	row := func(b models.Booking) views.BookingRowView {
		r := views.NewBookingRow(b, names, now, p.Location)
		if b.ID == errFor {
			r.Error = msg
		}
		return r
	}
	for _, b := range current {
		switch b.Phase(now) {
		case models.PhaseActive:
			v.Active = append(v.Active, row(b))
		case models.PhaseUpcoming:
			v.Upcoming = append(v.Upcoming, row(b))
		}
	}
	for i := len(past) - 1; i >= 0; i-- {
		if b := past[i]; !b.EndsAt.After(v.PastTo) || b.Status == models.StatusCancelled && !b.EndsAt.After(now) {
			v.Past = append(v.Past, row(b))
		}
	}
	v.HasOlder = v.PastFrom.After(p.User.CreatedAt)
	if v.Show == views.ShowCancelled {
		if v.Cancelled, err = h.cancelledRows(ctx, p.User, now, row); err != nil {
			return err
		}
	}
	if err := h.addHistory(ctx, &v); err != nil {
		return err
	}
	return Render(c, status, views.MyBookingsPage(p, v))
}

// cancelledRows lists the user's cancelled bookings, newest first: those
// they cancelled and those pre-empted or cancelled by an admin.
func (h *Bookings) cancelledRows(ctx context.Context, u *models.User, now time.Time, row func(models.Booking) views.BookingRowView) ([]views.BookingRowView, error) {
	all, err := h.Store.Bookings(ctx, models.BookingFilter{UserID: u.ID, From: time.Unix(0, 0), To: now.Add(models.MaxWatch),
		IncludeCancelled: true})
	if err != nil {
		return nil, err
	}
	var out []views.BookingRowView
	for i := len(all) - 1; i >= 0 && len(out) < models.NotificationPageSize; i-- {
		if all[i].Status == models.StatusCancelled {
			out = append(out, row(all[i]))
		}
	}
	return out, nil
}

// addHistory puts what happened to each listed booking beside it (one query).
func (h *Bookings) addHistory(ctx context.Context, v *views.MyBookingsView) error {
	lists := []*[]views.BookingRowView{&v.Active, &v.Upcoming, &v.Past, &v.Cancelled}
	var ids []int64
	for _, l := range lists {
		for _, r := range *l {
			ids = append(ids, r.B.ID)
		}
	}
	hist, err := h.Store.BookingHistory(ctx, ids)
	if err != nil {
		return err
	}
	for _, l := range lists {
		for i := range *l {
			(*l)[i].History = hist[(*l)[i].B.ID]
		}
	}
	return nil
}

// gpuNames names every GPU and MIG instance by ID (models.UnitNames),
// from one query.
func (b *Base) gpuNames(ctx context.Context) (map[int64]string, error) {
	gpus, err := b.Store.GPUs(ctx)
	if err != nil {
		return nil, err
	}
	return models.UnitNames(gpus), nil
}
