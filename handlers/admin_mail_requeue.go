package handlers

import (
	"github.com/labstack/echo/v4"
)

// unconfirmedShown caps the unconfirmed mail listed on the admin start
// page; more than this is an outage to handle with `gpubook mail requeue
// --all-unconfirmed`, not one button at a time.
const unconfirmedShown = 50

// RequeueMail sends one unconfirmed email again at an admin's request. The
// page warns that the recipient may already have it; the store audit-logs
// the decision.
func (h *Admin) RequeueMail(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.Store.RequeueUnconfirmed(c.Request().Context(), Actor(c), []int64{id}); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("admin.mail_requeued"))
	return RedirectSeeOther(c, "/admin")
}
