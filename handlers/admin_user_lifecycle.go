package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// DisableUser deactivates an account once the admin confirmed on the page
// that says what it does (no JavaScript needed): the person's future
// bookings are cancelled with notice and their tokens and feeds revoked.
func (h *Admin) DisableUser(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	u, err := h.Store.User(ctx, id)
	if err != nil {
		return err
	}
	if err := models.CheckDisable(u, models.UserFromContext(ctx)); err != nil {
		return err
	}
	if c.FormValue("confirm") != "yes" {
		return Render(c, http.StatusOK, views.ConfirmDisablePage(h.NewPage(c), u))
	}
	res, err := h.Store.DisableUser(ctx, id, Actor(c), h.Now(), h.noticeMailer())
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("admin.user.disabled_flash", "Name", u.Name, "Cancelled", res.Cancelled,
		"Ended", res.Ended, "Tokens", res.Tokens, "Feeds", res.Feeds))
	return RedirectSeeOther(c, "/admin/users/"+c.Param("id"))
}

// EnableUser reactivates an account; its revoked tokens stay revoked.
func (h *Admin) EnableUser(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.Store.EnableUser(c.Request().Context(), id, Actor(c), h.Now()); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("admin.user.enabled_flash"))
	return RedirectSeeOther(c, "/admin/users/"+c.Param("id"))
}

// RenameUser changes a user's email address; bookings, use and reports
// stay theirs. A bad or taken address is shown on the form.
func (h *Admin) RenameUser(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	email := c.FormValue("email")
	err = h.Store.RenameUser(c.Request().Context(), id, email, Actor(c), h.Now())
	switch models.ErrorCode(err) {
	case "":
		h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
		return RedirectSeeOther(c, "/admin/users/"+c.Param("id"))
	case models.EINVALID:
		return h.renderUserRename(c, http.StatusUnprocessableEntity, id, email, h.Translator(c).Fields(err))
	case models.ECONFLICT:
		return h.renderUserRename(c, http.StatusConflict, id, email, map[string]string{"email": h.Translator(c).T("admin.err.email_taken")})
	}
	return err
}

// renderUserRename renders the page with the address the admin typed.
func (h *Admin) renderUserRename(c echo.Context, status int, id int64, email string, errs map[string]string) error {
	v, err := h.userView(c, id)
	if err != nil {
		return err
	}
	v.NewEmail, v.RenameErrors = email, errs
	return Render(c, status, views.AdminUserPage(h.NewPage(c), v))
}
