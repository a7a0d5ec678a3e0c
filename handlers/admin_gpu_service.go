package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// serviceWithCare takes GPU id out of service. With bookings still on it,
// the first post shows them with a move or a cancellation for each; the
// confirmed post (confirm=1) does what the admin chose and tells the
// holders. A calendar that changed in between shows the page again.
func (h *Admin) serviceWithCare(c echo.Context, id int64, reason string) error {
	ctx := c.Request().Context()
	now := h.Now()
	plan, err := h.Store.GPUServicePlan(ctx, id, now)
	if err != nil {
		return err
	}
	reqs, err := h.Store.PendingRequestsOnGPU(ctx, id, now)
	if err != nil {
		return err
	}
	if len(plan)+len(reqs) > 0 && c.FormValue("confirm") != "1" {
		return h.renderService(c, http.StatusOK, id, reason, plan, "")
	}
	decide := make(map[int64]string, len(plan))
	for _, ch := range plan {
		decide[ch.Booking.ID] = c.FormValue("action_" + itoa64(ch.Booking.ID))
	}
	err = h.Store.TakeGPUOutOfService(ctx, id, reason, decide, models.UserFromContext(ctx), now, h.noticeMailer())
	if models.ErrorCode(err) == models.ECONFLICT {
		if plan, err = h.Store.GPUServicePlan(ctx, id, now); err != nil {
			return err
		}
		return h.renderService(c, http.StatusConflict, id, reason, plan, h.Translator(c).Msg(models.AsError(err).Msg))
	}
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("admin.service.done", "Count", len(plan)))
	return RedirectSeeOther(c, "/admin/nodes")
}

func (h *Admin) renderService(c echo.Context, status int, id int64, reason string, plan []models.ServiceChoice, msg string) error {
	ctx := c.Request().Context()
	g, err := h.Store.GPU(ctx, id)
	if err != nil {
		return err
	}
	names, err := h.gpuNames(ctx)
	if err != nil {
		return err
	}
	v := views.GPUServiceView{GPU: *g, Reason: reason, Choices: plan, Names: names, Error: msg}
	if v.Requests, err = h.Store.PendingRequestsOnGPU(ctx, id, h.Now()); err != nil {
		return err
	}
	return Render(c, status, views.GPUServicePage(h.NewPage(c), v))
}

// noticeMailer renders an in-app notice as its email, in the recipient's
// language and zone.
func (h *Admin) noticeMailer() models.NotificationMailer {
	return func(n models.Notification, to *models.User) (models.OutboxMessage, error) {
		return views.EmailMessage(views.EmailEnvFor(h.I18n, h.BaseURL, h.Location, to), n.Kind, n.DedupKey, to, n)
	}
}
