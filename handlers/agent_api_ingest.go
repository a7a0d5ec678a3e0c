package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// bookingReleaser is the store's ReleaseBooking, asserted at run time so
// that the agent API does not depend on the booking-change code at compile time.
type bookingReleaser interface {
	ReleaseBooking(ctx context.Context, id int64, actor *models.User, now time.Time) (*models.Booking, error)
}

// Usage stores a batch of per-minute records; a resend is harmless (204
// also when every record was already known).
func (h *AgentAPI) Usage(c echo.Context) error {
	s, err := decodeUsage(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	res, err := h.Store.IngestUsageStream(ctx, h.node(c), s, h.retention(), h.Now())
	if err != nil {
		return err
	}
	if h.UsageIngested != nil {
		h.UsageIngested(res)
	}
	if res.Duplicates > 0 || res.Stale > 0 {
		h.logger().Info("agent usage resent", "node_id", h.node(c), "batch", s.BatchID, "new", res.Inserted, "duplicates", res.Duplicates, "stale", res.Stale)
	}
	h.releaseIdle(ctx, h.node(c))
	return c.NoContent(http.StatusNoContent)
}

// Violations stores violations; an escalation updates the stored one.
func (h *AgentAPI) Violations(c echo.Context) error {
	var b wire.ViolationBatch
	size := func(n int) { b.Violations = make([]wire.Violation, 0, n) }
	if err := decodeAgentSized(c, &b, violationShape, wire.MaxBody, "violations", size); err != nil {
		return err
	}
	if err := h.Store.RecordViolations(c.Request().Context(), h.node(c), b, h.Now()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// Idle records idle reports, warns the owners (when the warner is wired)
// and applies the auto-release rule.
func (h *AgentAPI) Idle(c echo.Context) error {
	var b wire.IdleBatch
	size := func(n int) { b.Reports = make([]wire.IdleReport, 0, n) }
	if err := decodeAgentSized(c, &b, idleShape, wire.MaxBody, "reports", size); err != nil {
		return err
	}
	ctx := c.Request().Context()
	toWarn, err := h.Store.RecordIdle(ctx, h.node(c), b, h.Now())
	if err != nil {
		return err
	}
	var marked []int64
	for _, w := range toWarn {
		if h.warnIdle(ctx, w.Report) {
			marked = append(marked, w.IDs...)
		}
	}
	if err := h.Store.MarkIdleReports(ctx, marked, true, false, h.Now()); err != nil {
		h.logger().Error("idle warning: mark warned", "reports", len(marked), "err", err)
	}
	h.releaseIdle(ctx, h.node(c))
	return c.NoContent(http.StatusNoContent)
}

// warnIdle hands a booking's newest un-warned report (RecordIdle returns
// only those, one per booking) to IdleWarner. Without a warner (no outbox
// yet) it only logs, and warned_at stays NULL for the outbox to act on. It
// reports whether the booking's reports are to be marked warned.
func (h *AgentAPI) warnIdle(ctx context.Context, r models.IdleReport) bool {
	if h.IdleWarner == nil {
		h.logger().Info("idle booking reported; warning email pending (no outbox wired)", "booking", r.BookingID, "user", r.UserName, "since", r.IdleSince)
		return false
	}
	if err := h.IdleWarner(ctx, r); err != nil {
		h.logger().Error("idle warning", "booking", r.BookingID, "err", err)
		return false
	}
	return true
}

// releaseIdle releases the bookings the idle policy says are due. Failures
// are logged, not returned: the agent's data is stored, and a resend would
// not help; the next batch tries again.
func (h *AgentAPI) releaseIdle(ctx context.Context, nodeID int64) {
	if !h.IdlePolicy.AutoRelease {
		return
	}
	due, err := h.Store.IdleReleaseDue(ctx, nodeID, h.IdlePolicy, h.Now())
	if err != nil {
		h.logger().Error("idle auto-release", "node_id", nodeID, "err", err)
		return
	}
	rel, ok := h.Store.(bookingReleaser)
	for _, r := range due {
		if !ok {
			h.logger().Warn("idle auto-release due but the store cannot release bookings", "booking", r.BookingID)
			return
		}
		if _, err := rel.ReleaseBooking(ctx, r.BookingID, models.AutoReleaseActor, h.Now()); err != nil {
			h.logger().Error("idle auto-release", "booking", r.BookingID, "err", err)
			continue
		}
		if err := h.Store.MarkIdle(ctx, r.ID, false, true, h.Now()); err != nil {
			h.logger().Error("idle auto-release: mark released", "report", r.ID, "err", err)
		}
		h.logger().Info("idle booking auto-released", "booking", r.BookingID, "user", r.UserName, "idle_since", r.IdleSince)
	}
}
