package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Profile serves the signed-in user's own settings and API tokens.
type Profile struct {
	*Base
	BaseURL string
}

// commonZones are offered first; any IANA zone is accepted.
var commonZones = []string{"Asia/Shanghai", "Asia/Hong_Kong", "Asia/Singapore", "Asia/Tokyo", "Asia/Seoul", "Asia/Kolkata",
	"Europe/Berlin", "Europe/London", "Europe/Paris", "Europe/Zurich", "America/New_York", "America/Chicago",
	"America/Los_Angeles", "Australia/Sydney", "UTC"}

// Show renders the profile page.
func (h *Profile) Show(c echo.Context) error {
	u := models.UserFromContext(c.Request().Context())
	return h.render(c, http.StatusOK, views.ProfileView{Language: u.Language, TimeZone: u.TimeZone})
}

func (h *Profile) render(c echo.Context, status int, v views.ProfileView) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	var err error
	if v.Teams, err = h.Store.MembershipsOf(ctx, u.ID); err != nil {
		return err
	}
	if v.Tokens, err = h.Store.Tokens(ctx, u.ID); err != nil {
		return err
	}
	if v.ReportEmail, err = ReportEmailOn(ctx, h.Store, u.ID); err != nil {
		return err
	}
	if v.Reminders, err = h.Store.NotifyReminders(ctx, u.ID); err != nil {
		return err
	}
	if v.Unix, err = h.Store.UnixIdentity(ctx, u.ID); err != nil {
		return err
	}
	newFeed := v.Feeds.New
	if v.Feeds, err = h.feedRows(ctx, u, v.Teams); err != nil {
		return err
	}
	v.Feeds.New = newFeed
	v.Zones, v.BaseURL = commonZones, h.BaseURL
	return Render(c, status, views.ProfilePage(h.NewPage(c), v))
}

// Save stores the language and time zone.
func (h *Profile) Save(c echo.Context) error {
	ctx := c.Request().Context()
	u := *models.UserFromContext(ctx)
	u.Language, u.TimeZone = c.FormValue("language"), strings.TrimSpace(c.FormValue("time_zone"))
	err := h.Store.UpdateUser(ctx, &u, Actor(c))
	if models.ErrorCode(err) == models.EINVALID {
		return h.render(c, http.StatusUnprocessableEntity, views.ProfileView{Language: u.Language, TimeZone: u.TimeZone, Errors: h.Translator(c).Fields(err)})
	}
	if err != nil {
		return err
	}
	h.setLangCookie(c, u.Language)
	c.SetRequest(c.Request().WithContext(models.WithUser(ctx, &u)))
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/profile")
}

// CreateToken makes a personal API token and shows it once, on this
// response only: it is never stored in plain text, not even in the session.
func (h *Profile) CreateToken(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	held, err := h.Store.Tokens(ctx, u.ID)
	if err != nil {
		return err
	}
	var tok *models.APIToken
	var plain string
	if err = models.CheckTokenCap(held); err == nil {
		tok, plain, err = h.Store.CreateToken(ctx, u.ID, c.FormValue("name"), h.Now(), Actor(c))
	}
	if models.ErrorCode(err) == models.EINVALID {
		return h.render(c, http.StatusUnprocessableEntity, views.ProfileView{Language: u.Language, TimeZone: u.TimeZone, Errors: h.Translator(c).Fields(err)})
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return h.render(c, http.StatusCreated, views.ProfileView{Language: u.Language, TimeZone: u.TimeZone, NewToken: plain, NewTokenName: tok.Name})
}

// RevokeToken revokes one of the user's own tokens; another user's token id
// is a not-found, so that ids reveal nothing.
func (h *Profile) RevokeToken(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	u := models.UserFromContext(ctx)
	toks, err := h.Store.Tokens(ctx, u.ID)
	if err != nil {
		return err
	}
	var tok *models.APIToken
	for i := range toks {
		if toks[i].ID == id {
			tok = &toks[i]
		}
	}
	if tok == nil {
		return models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "token"))
	}
	t := h.Translator(c)
	if ok, err := h.confirmed(c, views.ConfirmView{Title: t.T("confirm.token_title", "Name", tok.Name),
		Text: t.T("confirm.token_text"), Button: t.T("profile.revoke"), Back: "/profile#tokens"}); !ok {
		return err
	}
	if err := h.Store.RevokeToken(ctx, id, h.Now(), Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("profile.token_revoked"))
	return RedirectSeeOther(c, "/profile#tokens")
}
