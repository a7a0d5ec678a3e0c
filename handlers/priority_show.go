package handlers

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Show is a request's page: its justification, status, decision and
// history, for the requester, the leads of its team and admins.
func (h *Priority) Show(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	if _, err := h.Store.ExpireRequests(ctx, h.Now()); err != nil {
		return err
	}
	r, err := h.Store.Request(ctx, id)
	if err != nil {
		return err
	}
	lead, err := h.Store.LeadTeams(ctx, u.ID)
	if err != nil {
		return err
	}
	decider := models.CanDecide(u, r, lead) == nil
	if !decider && u.ID != r.UserID && !u.IsAdmin {
		return models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "request"))
	}
	v, err := h.requestView(ctx, *r, decider)
	if err != nil {
		return err
	}
	if v.Events, err = h.Store.AuditEvents(ctx, models.AuditFilter{TargetType: "request", TargetID: strconv.FormatInt(id, 10), Limit: 100}); err != nil {
		return err
	}
	slices.Reverse(v.Events) // a history reads from the first event on
	return Render(c, http.StatusOK, views.RequestPage(h.NewPage(c), v))
}

// requestView gathers what a decider weighs: the GPUs, the bookings in the
// way (what approval would pre-empt), the requester's use in the last 7
// days and the rules the request goes beyond.
func (h *Priority) requestView(ctx context.Context, r models.PriorityRequest, decider bool) (views.RequestView, error) {
	now := h.Now()
	u := models.UserFromContext(ctx)
	v := views.RequestView{R: r, CanDecide: decider && r.Status == models.RequestPending, CanWithdraw: models.CanWithdraw(u, &r) == nil}
	names, err := h.gpuNames(ctx)
	if err != nil {
		return v, err
	}
	v.GPULabels, v.GPUNames = views.GPUNames(r.GPUIDs, names), names
	if err := h.preview(ctx, &v); err != nil {
		return v, err
	}
	if v.CanDecide { // a GPU taken out while it waited: say so before the decider tries
		gpus, err := h.Store.GPUs(ctx)
		if err != nil {
			return v, err
		}
		if out := models.RequireInService(gpus, r.GPUIDs); out != nil {
			v.PlanErr = out
		}
	}
	inWay, err := h.Store.Bookings(ctx, models.BookingFilter{From: r.StartsAt, To: r.EndsAt, NodeID: r.NodeID})
	if err != nil {
		return v, err
	}
	for _, b := range inWay {
		if r.BookingID != nil && b.ID == *r.BookingID {
			continue // its own booking, once approved, is in nobody's way
		}
		for _, g := range b.GPUIDs {
			if slices.Contains(r.GPUIDs, g) {
				v.InWay = append(v.InWay, views.ConflictLine{GPU: names[g], UserName: b.UserName, Start: b.StartsAt, Stop: b.EndsAt})
			}
		}
	}
	week := now.Add(-7 * 24 * time.Hour)
	used, err := h.Store.Bookings(ctx, models.BookingFilter{From: week, To: now, UserID: r.UserID})
	if err != nil {
		return v, err
	}
	v.RecentUsed = models.UsedGPUMinutes(models.HoldingsOf(used), week, now)
	if r.Status == models.RequestPending {
		// The rules it breaks, for the deciders; a request that no longer
		// validates (its start passed) simply shows none.
		v.Breaches, err = h.Store.CheckBooking(ctx, r.Booking(), h.Limits, now)
		if models.ErrorCode(err) == models.EINTERNAL {
			return v, err
		}
	}
	return v, nil
}

// preview fills what approving would do to the bookings in the way, for a
// decider of a pending pre-empting request, and the plan's fingerprint that
// the approve form carries. A plan that cannot be made (a priority booking
// in the way) is shown as the reason instead.
func (h *Priority) preview(ctx context.Context, v *views.RequestView) error {
	if !v.CanDecide {
		return nil
	}
	plan, err := h.Store.PreemptionPlan(ctx, v.R.ID, h.Now())
	if code := models.ErrorCode(err); code == models.ECONFLICT {
		v.PlanErr = err
		return nil
	} else if err != nil {
		return err
	}
	v.Plan, v.PlanHash = plan, models.PlanFingerprint(v.R.ID, plan)
	return nil
}
