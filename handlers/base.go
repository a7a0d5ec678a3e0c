// Package handlers holds gpubook's Echo handlers: each parses a request,
// calls the domain and renders a view or JSON. Rules live in models; the
// web package wires these handlers to routes and middleware.
package handlers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

// Store is everything the handlers read and write.
type Store interface {
	models.UserStore
	models.UserLifecycleStore
	models.TeamStore
	models.NodeStore
	models.BookingStore
	models.TokenStore
	models.FeedStore
	models.AuditStore
	models.AgentStore
	models.SSOStore
	models.PolicyStore
	models.PriorityStore
	models.LendingStore
	models.NoticeStore
	models.NotificationStore
	models.GPUServiceStore
	models.BookingHistoryStore
	models.OutboxStore
	models.OutboxAdminStore
	models.ReportStore
	models.ImportStore
	Ping(ctx context.Context) error
}

// Base carries what every handler group needs. It is built once in web.New.
type Base struct {
	Store    Store
	Sessions *scs.SessionManager
	I18n     *i18n.Bundle
	Location *time.Location // the cluster's zone
	Now      models.Clock
	DevLogin bool
	Limits   models.BookingLimits
	// SessionIdle and SessionMaxAge end sessions by gpubook's own clock
	// (injectable in tests), on top of scs's cookie and store expiry.
	SessionIdle, SessionMaxAge time.Duration
	// GroupPrefix and GroupLeadSuffix describe the SSO prefix rule, for display.
	GroupPrefix, GroupLeadSuffix string
}

// Session keys.
const (
	sessionUserID  = "user_id"
	sessionFlashes = "flashes"
	sessionCSRF    = "csrf"
	// sessionSignedInAt and sessionSeenAt are Unix seconds by Base.Now.
	sessionSignedInAt = "signed_in_at"
	sessionSeenAt     = "seen_at"
)

// Translator returns the translator for the request: the user's language,
// else the visitor's choice (its cookie), else Accept-Language.
func (b *Base) Translator(c echo.Context) *i18n.Translator {
	setting := ""
	if u := models.UserFromContext(c.Request().Context()); u != nil {
		setting = u.Language
	}
	if setting == "" {
		setting = cookieLang(c)
	}
	return b.I18n.For(i18n.Match(setting, c.Request().Header.Get("Accept-Language")))
}

type sessionKey struct{}

// WithSessionLoaded marks a request context as carrying a loaded session;
// the session middleware sets it so that pages outside it (404s, the API)
// know not to touch the session.
func WithSessionLoaded(ctx context.Context) context.Context {
	return context.WithValue(ctx, sessionKey{}, true)
}

// hasSession reports whether the session middleware ran for this request.
func (b *Base) hasSession(c echo.Context) bool {
	loaded, _ := c.Request().Context().Value(sessionKey{}).(bool)
	return loaded
}

// NewPage builds the data every full page needs, consuming the flash messages.
func (b *Base) NewPage(c echo.Context) *views.Page {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	p := &views.Page{
		T:         b.Translator(c),
		User:      u,
		DevLogin:  b.DevLogin,
		Path:      c.Request().URL.Path,
		Query:     c.QueryParams(),
		Location:  u.Location(b.Location),
		Now:       b.Now(),
		RequestID: c.Response().Header().Get(echo.HeaderXRequestID),
	}
	if u != nil {
		// One query for the badge, the bell and the Approvals tab. A failure
		// costs only those, but is logged, not hidden.
		nav, err := b.Store.NavState(ctx, u, p.Now)
		if err != nil {
			slog.WarnContext(ctx, "page: navigation figures", "user_id", u.ID, "err", err)
		}
		p.PendingApprovals, p.UnreadNotices = nav.PendingApprovals, nav.UnreadNotices
		p.Decides = u.IsAdmin || nav.LeadsATeam
	}
	if b.hasSession(c) {
		p.CSRF = b.CSRFToken(c)
		if fs, ok := b.Sessions.Pop(ctx, sessionFlashes).([]views.Flash); ok {
			p.Flashes = fs
		}
	}
	return p
}

// csrfCookie holds an anonymous visitor's CSRF token (double submit): a
// page view must not create a stored session just to remember it. A
// signed-in session keeps its own token, made at sign-in.
const csrfCookie = "gpubook_csrf"

// CSRFToken returns the token that the request's forms and htmx calls must
// send back, making one on first use: in the session once signed in, else
// in a cookie of its own.
func (b *Base) CSRFToken(c echo.Context) string {
	if tok := b.ExpectedCSRF(c); tok != "" {
		return tok
	}
	tok := newCSRFToken()
	if tok == "" {
		return ""
	}
	ctx := c.Request().Context()
	if id, _ := b.Sessions.Get(ctx, sessionUserID).(int64); id != 0 {
		b.Sessions.Put(ctx, sessionCSRF, tok)
		return tok
	}
	c.SetCookie(b.csrfCookie(tok))
	return tok
}

// ExpectedCSRF returns the request's CSRF token without making one: "" when
// the visitor has none yet (a post then fails the check).
func (b *Base) ExpectedCSRF(c echo.Context) string {
	ctx := c.Request().Context()
	if tok := b.Sessions.GetString(ctx, sessionCSRF); tok != "" {
		return tok
	}
	if id, _ := b.Sessions.Get(ctx, sessionUserID).(int64); id != 0 {
		return "" // a signed-in session never falls back to the anonymous cookie
	}
	ck, err := c.Cookie(b.csrfCookieName())
	if err != nil || !validCSRFToken(ck.Value) {
		return ""
	}
	return ck.Value
}

// rotateCSRF gives a session that just signed in a token of its own and
// drops the anonymous one, so that a token seen before sign-in (or planted
// in the cookie) is worthless afterwards.
func (b *Base) rotateCSRF(c echo.Context) {
	if tok := newCSRFToken(); tok != "" {
		b.Sessions.Put(c.Request().Context(), sessionCSRF, tok)
	}
	ck := b.csrfCookie("")
	ck.MaxAge = -1
	c.SetCookie(ck)
}

// csrfCookieName is __Host- prefixed over HTTPS, so that a sibling
// subdomain cannot plant a token.
func (b *Base) csrfCookieName() string {
	if b.Sessions.Cookie.Secure {
		return "__Host-" + csrfCookie
	}
	return csrfCookie
}

func (b *Base) csrfCookie(tok string) *http.Cookie {
	return &http.Cookie{Name: b.csrfCookieName(), Value: tok, Path: "/", HttpOnly: true,
		Secure: b.Sessions.Cookie.Secure, SameSite: http.SameSiteLaxMode}
}

func newCSRFToken() string {
	plain, _, err := models.NewTokenSecret()
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(plain, models.TokenPrefix)
}

// validCSRFToken accepts only what newCSRFToken makes: the value is written
// into pages, so a cookie the client chose must not carry markup.
func validCSRFToken(tok string) bool {
	if len(tok) < 20 || len(tok) > 100 {
		return false
	}
	for _, r := range tok {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Flash queues a message for the next page the user sees.
func (b *Base) Flash(c echo.Context, kind, text string) {
	ctx := c.Request().Context()
	fs, _ := b.Sessions.Get(ctx, sessionFlashes).([]views.Flash)
	b.Sessions.Put(ctx, sessionFlashes, append(fs, views.Flash{Kind: kind, Text: text}))
}

// Render writes a templ component with status. The page is rendered into
// a buffer first, as templ's own handler does: a template that fails half
// way then leaves nothing written, and the error handler answers a clean
// error page instead of half a page with the status already sent.
func Render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return fmt.Errorf("handlers: render: %w", err)
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// RedirectSeeOther ends a successful form post (Post/Redirect/Get).
func RedirectSeeOther(c echo.Context, to string) error {
	return c.Redirect(http.StatusSeeOther, to)
}

// IsHTMX reports whether the request came from htmx, which wants a fragment.
func IsHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// Actor is the audit actor of the request.
func Actor(c echo.Context) models.Actor {
	return models.ActorFor(models.UserFromContext(c.Request().Context()), c.RealIP())
}

// PathID parses a numeric path parameter; a bad one is a not-found.
func PathID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "page"))
	}
	return id, nil
}

// SafeNext keeps a redirect target on this site: only local absolute paths.
func SafeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return next
}
