package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// Approve approves a request: the store re-checks the slot, pre-empts if
// asked, books and mails in one transaction. It applies only the plan the
// decider was shown (the form's plan fingerprint): if the calendar changed
// the plan since, it refuses and the page shows the new one with what
// changed (staleApproval). Other refusals (not a lead, own request,
// already decided) render through the error handler.
func (h *Priority) Approve(c echo.Context) error {
	return h.decide(c, true)
}

// Deny denies a request with the decider's comment.
func (h *Priority) Deny(c echo.Context) error {
	return h.decide(c, false)
}

func (h *Priority) decide(c echo.Context, approve bool) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	u := models.UserFromContext(c.Request().Context())
	comment, fe := c.FormValue("comment"), models.FieldErrors{}
	if !fe.Check("comment", &comment, models.CommentText) {
		return fe.Err()
	}
	key := "request.denied_flash"
	if approve {
		key = "request.approved_flash"
		// A form without the preview it was decided on carries no plan,
		// which matches none: the store refuses it like a changed plan.
		plan := c.FormValue("plan")
		if plan == models.AnyPlan {
			plan = ""
		}
		_, err = h.Store.ApproveRequest(c.Request().Context(), id, u, comment, plan, h.Now(), h.Mailer())
		if models.ErrorCode(err) == models.ECONFLICT {
			return h.staleApproval(c, id, c.FormValue("shown"), err)
		}
	} else {
		_, err = h.Store.DenyRequest(c.Request().Context(), id, u, comment, h.Now(), h.Mailer())
	}
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T(key))
	return RedirectSeeOther(c, "/requests/"+itoa64(id))
}

// Withdraw lets the requester take back a pending request.
func (h *Priority) Withdraw(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	u := models.UserFromContext(c.Request().Context())
	if _, err := h.Store.WithdrawRequest(c.Request().Context(), id, u, h.Now()); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("request.withdrawn_flash"))
	return RedirectSeeOther(c, "/requests/"+itoa64(id))
}
