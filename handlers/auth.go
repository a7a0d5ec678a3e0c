package handlers

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Auth signs people in and out. SSO is nil when no IdP is configured.
type Auth struct {
	*Base
	SSO *SSO
}

// SignIn starts an authenticated session for u with a fresh session token
// (no fixation) and records it in the audit log.
func (h *Auth) SignIn(c echo.Context, u *models.User, method string) error {
	ctx := c.Request().Context()
	if u.Disabled() {
		return models.NewError(models.EFORBIDDEN, models.M("err.account_disabled"))
	}
	if err := h.Sessions.RenewToken(ctx); err != nil {
		return models.Internal(err)
	}
	h.Sessions.Put(ctx, sessionUserID, u.ID)
	h.rotateCSRF(c)
	now := h.Now().Unix()
	h.Sessions.Put(ctx, sessionSignedInAt, now)
	h.Sessions.Put(ctx, sessionSeenAt, now)
	// From here on the request speaks as u: the sign-in flash is then in
	// u's language, not the anonymous visitor's.
	c.SetRequest(c.Request().WithContext(models.WithUser(ctx, u)))
	return h.Store.RecordAudit(ctx, models.AuditEvent{At: h.Now(), ActorID: &u.ID, ActorLabel: u.Email,
		Action: models.AuditSignIn, TargetType: "user", TargetID: itoa64(u.ID), Details: `{"method":"` + method + `"}`, IP: c.RealIP()})
}

// SessionUserID returns the signed-in user's id from the session, or 0.
// A session past its idle or absolute timeout is destroyed here, by
// gpubook's clock, so that expiry holds whatever the cookie says.
func (b *Base) SessionUserID(c echo.Context) int64 {
	if !b.hasSession(c) {
		return 0
	}
	ctx := c.Request().Context()
	id, _ := b.Sessions.Get(ctx, sessionUserID).(int64)
	if id == 0 {
		return 0
	}
	now := b.Now()
	signedIn := time.Unix(b.Sessions.GetInt64(ctx, sessionSignedInAt), 0)
	seen := time.Unix(b.Sessions.GetInt64(ctx, sessionSeenAt), 0)
	if now.Sub(signedIn) > b.SessionMaxAge || now.Sub(seen) > b.SessionIdle {
		_ = b.Sessions.Destroy(ctx)
		return 0
	}
	if now.Sub(seen) > time.Minute {
		b.Sessions.Put(ctx, sessionSeenAt, now.Unix())
	}
	return id
}

// Logout ends the session. A visitor who is not signed in has none to
// end: their post stores nothing, not even the "signed out" flash, which
// would be a session row per anonymous post.
func (h *Auth) Logout(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	if u == nil {
		return RedirectSeeOther(c, "/")
	}
	if err := h.Store.RecordAudit(ctx, models.AuditEvent{At: h.Now(), ActorID: &u.ID, ActorLabel: u.Email,
		Action: models.AuditSignOut, TargetType: "user", TargetID: itoa64(u.ID), IP: c.RealIP()}); err != nil {
		return err
	}
	if u.Language != "" {
		h.setLangCookie(c, u.Language) // the signed-out pages stay in their language
	}
	idToken := h.Sessions.GetString(ctx, sessionIDToken)
	if err := h.Sessions.Destroy(ctx); err != nil {
		return models.Internal(err)
	}
	h.Flash(c, "ok", h.Translator(c).T("login.signed_out"))
	if h.SSO != nil {
		if to := h.SSO.LogoutURL(ctx, idToken); to != "" {
			return RedirectSeeOther(c, to)
		}
	}
	return RedirectSeeOther(c, "/")
}

// SetLanguage switches the interface language and returns to the page.
// The choice is kept in a cookie (never a session row), and for a
// signed-in user also saved in their profile. It is a form post, never a
// link: a GET must not change stored state.
func (h *Auth) SetLanguage(c echo.Context) error {
	ctx := c.Request().Context()
	lang := c.FormValue("to")
	if !models.ValidLanguage(lang) {
		return models.NewError(models.EINVALID, models.M("err.language_unsupported"))
	}
	h.setLangCookie(c, lang)
	if u := models.UserFromContext(ctx); u != nil && u.Language != lang {
		u.Language = lang
		if err := h.Store.UpdateUser(ctx, u, Actor(c)); err != nil {
			return err
		}
	}
	return RedirectSeeOther(c, SafeNext(c.FormValue("next")))
}

// ShowDevLogin shows the development sign-in page.
func (h *Auth) ShowDevLogin(c echo.Context) error {
	users, err := h.Store.Users(c.Request().Context())
	if err != nil {
		return err
	}
	v := views.DevLoginView{Users: users, Next: SafeNext(c.QueryParam("next"))}
	return Render(c, http.StatusOK, views.DevLoginPage(h.NewPage(c), v))
}

// DevLogin signs in as the user with the email, creating them if a name is
// given. The first user ever created this way becomes an admin, so that a
// fresh install can be administered.
func (h *Auth) DevLogin(c echo.Context) error {
	ctx := c.Request().Context()
	email, name := strings.TrimSpace(c.FormValue("email")), strings.TrimSpace(c.FormValue("name"))
	next := SafeNext(c.FormValue("next"))
	u, err := h.Store.UserByEmail(ctx, email)
	if models.ErrorCode(err) == models.ENOTFOUND {
		u, err = h.createDevUser(c, email, name)
	}
	if models.ErrorCode(err) == models.EINVALID {
		return h.devLoginInvalid(c, email, name, next, err)
	}
	if err != nil {
		return err
	}
	if err := h.SignIn(c, u, "dev"); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("login.signed_in", "Name", u.Name))
	return RedirectSeeOther(c, next)
}

func (h *Auth) createDevUser(c echo.Context, email, name string) (*models.User, error) {
	ctx := c.Request().Context()
	if name == "" {
		fe := models.FieldErrors{}
		fe.Add("name", models.M("err.name_required"))
		if strings.TrimSpace(email) == "" {
			fe.Add("email", models.M("err.email_required"))
		}
		return nil, fe.Err()
	}
	n, err := h.Store.CountUsers(ctx)
	if err != nil {
		return nil, err
	}
	u := &models.User{Email: email, Name: name, IsAdmin: n == 0}
	if err := h.Store.CreateUser(ctx, u, models.Actor{Label: "dev-login", IP: c.RealIP()}); err != nil {
		return nil, err
	}
	return u, nil
}

func (h *Auth) devLoginInvalid(c echo.Context, email, name, next string, err error) error {
	users, lerr := h.Store.Users(c.Request().Context())
	if lerr != nil {
		return lerr
	}
	p := h.NewPage(c)
	v := views.DevLoginView{Users: users, Email: email, Name: name, Next: next, Errors: p.T.Fields(err)}
	return Render(c, http.StatusUnprocessableEntity, views.DevLoginPage(p, v))
}
