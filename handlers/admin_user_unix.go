package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// User shows one user to an admin, with the form for their Unix login.
func (h *Admin) User(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	return h.renderUser(c, http.StatusOK, id, nil, nil)
}

// SaveUnix sets a user's Unix login and extra names; an empty login goes
// back to the one assumed from the email. A name another user owns is
// refused on the form with that name.
func (h *Admin) SaveUnix(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	x := models.UnixIdentity{Name: c.FormValue("unix"), Extra: models.ParseUnixNames(c.FormValue("unix_extra")), Source: models.UnixSourceAdmin}
	if x.Name == "" && len(x.Extra) == 0 {
		x.Source = models.UnixSourceAssumed
	}
	err = h.Store.SetUnixLogin(c.Request().Context(), id, x, Actor(c))
	switch models.ErrorCode(err) {
	case "":
		h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
		return RedirectSeeOther(c, "/admin/users/"+c.Param("id"))
	case models.EINVALID:
		return h.renderUser(c, http.StatusUnprocessableEntity, id, &x, h.Translator(c).Fields(err))
	case models.ECONFLICT:
		msg := h.Translator(c).Msg(models.AsError(err).Msg)
		return h.renderUser(c, http.StatusConflict, id, &x, map[string]string{"unix": msg})
	}
	return err
}

// renderUser renders the page; form, when set, is what the admin typed.
func (h *Admin) renderUser(c echo.Context, status int, id int64, form *models.UnixIdentity, errs map[string]string) error {
	v, err := h.userView(c, id)
	if err != nil {
		return err
	}
	v.Errors = errs
	if form != nil {
		v.Form = *form
	}
	return Render(c, status, views.AdminUserPage(h.NewPage(c), v))
}

// userView reads what the admin's page of a user shows.
func (h *Admin) userView(c echo.Context, id int64) (views.AdminUserView, error) {
	ctx := c.Request().Context()
	u, err := h.Store.User(ctx, id)
	if err != nil {
		return views.AdminUserView{}, err
	}
	x, err := h.Store.UnixIdentity(ctx, id)
	if err != nil {
		return views.AdminUserView{}, err
	}
	me := models.UserFromContext(ctx)
	return views.AdminUserView{User: u, Unix: x, Form: x, ClaimSet: h.UnixClaimSet, NewEmail: u.Email,
		Self: me != nil && me.ID == u.ID}, nil
}
