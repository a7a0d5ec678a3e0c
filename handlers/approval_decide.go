package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// Approve approves a request: the store re-checks the slot, pre-empts if
// asked, books and mails in one transaction. Refusals (not a lead, own
// request, already decided, slot taken) render through the error handler.
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
		_, err = h.Store.ApproveRequest(c.Request().Context(), id, u, comment, h.Now(), h.Mailer())
	} else {
		_, err = h.Store.DenyRequest(c.Request().Context(), id, u, comment, h.Now(), h.Mailer())
	}
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T(key))
	return RedirectSeeOther(c, "/requests/"+itoa64(id))
}
