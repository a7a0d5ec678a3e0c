package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Queue is /approvals: the pending requests the viewer may decide (their
// teams' for a lead, all for an admin, never their own), and their own.
// Requests whose start passed are expired first, so none is shown stale.
func (h *Priority) Queue(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	now := h.Now()
	if _, err := h.Store.ExpireRequests(ctx, now); err != nil {
		return err
	}
	pending, err := h.Store.Requests(ctx, models.RequestFilter{Status: models.RequestPending, Decider: u})
	if err != nil {
		return err
	}
	var v views.ApprovalsView
	for _, r := range pending {
		rv, err := h.requestView(ctx, r, true)
		if err != nil {
			return err
		}
		v.Items = append(v.Items, rv)
	}
	if v.Mine, err = h.Store.Requests(ctx, models.RequestFilter{UserID: u.ID, From: now.AddDate(0, -1, 0)}); err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.ApprovalsPage(h.NewPage(c), v))
}
