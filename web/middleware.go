package web

import (
	"crypto/subtle"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models"
)

// accessLog writes one structured line per request.
func accessLog(logger *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			req, res := c.Request(), c.Response()
			level := slog.LevelInfo
			if res.Status >= 500 {
				level = slog.LevelError
			}
			if !logger.Enabled(req.Context(), level) {
				return nil
			}
			// Typed attributes, on the stack: no boxing of every value
			// and no parsing of key-value pairs, on every request.
			var buf [9]slog.Attr
			attrs := append(buf[:0], slog.String("method", req.Method), slog.String("path", logPath(req.URL.Path)),
				slog.Int("status", res.Status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.Int64("bytes", res.Size), slog.String("request_id", res.Header().Get(echo.HeaderXRequestID)),
				slog.String("ip", c.RealIP()))
			if u := models.UserFromContext(req.Context()); u != nil {
				attrs = append(attrs, slog.Int64("user_id", u.ID))
			}
			logger.LogAttrs(req.Context(), level, "request", attrs...)
			return nil
		}
	}
}

// recoverPanics turns a panic into an internal error (logged with its stack
// by the logger below, shown as the friendly 500 page).
func recoverPanics(logger *slog.Logger) echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableErrorHandler: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			logger.ErrorContext(c.Request().Context(), "panic", "err", err, "path", logPath(c.Request().URL.Path), "stack", string(stack))
			return models.Internal(err)
		},
	})
}

// securityHeaders sets the headers every response carries. The CSP allows
// no inline script: htmx and our own script are files under /static.
func securityHeaders(https bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
				"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'self'; object-src 'none'")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "same-origin")
			h.Set("X-Frame-Options", "DENY")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			if https {
				h.Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
			}
			return next(c)
		}
	}
}

// sessions loads and saves the scs session around the handler. Errors are
// handled inside, so that the session is committed after the error page.
func sessions(sm *scs.SessionManager) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			sm.LoadAndSave(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c.SetRequest(r.WithContext(handlers.WithSessionLoaded(r.Context())))
				c.SetResponse(echo.NewResponse(w, c.Echo()))
				if err := next(c); err != nil {
					c.Error(err)
				}
			})).ServeHTTP(c.Response(), c.Request())
			return nil
		}
	}
}

// loadUser puts the session's user into the request context. A session
// whose user is gone or deactivated is treated as anonymous.
func loadUser(base *handlers.Base) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			// The address the trusted-proxy aware extractor (clientip.go)
			// finds, for audit events written deep in the store.
			c.SetRequest(c.Request().WithContext(models.WithClientIP(c.Request().Context(), c.RealIP())))
			id := base.SessionUserID(c)
			if id == 0 {
				return next(c)
			}
			u, err := base.Store.User(c.Request().Context(), id)
			if models.ErrorCode(err) == models.ENOTFOUND {
				return next(c)
			}
			if err == nil && u.Disabled() { // deactivated: their sessions end with it
				return next(c)
			}
			if err != nil {
				return err
			}
			browserZone(c, u)
			c.SetRequest(c.Request().WithContext(models.WithUser(c.Request().Context(), u)))
			return next(c)
		}
	}
}

// csrf refuses state-changing browser requests without the visitor's token
// (form field _csrf in the body or header X-CSRF-Token) and cross-site ones
// outright.
func csrf(base *handlers.Base) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				return next(c)
			}
			if strings.HasSuffix(c.Path(), "/*") && c.Path() != "/static/*" {
				return next(c) // no such route: the answer is a 404, nothing changes
			}
			if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" {
				return models.NewError(models.EFORBIDDEN, models.M("err.csrf"))
			}
			if origin := r.Header.Get("Origin"); origin != "" && origin != "null" && !sameHost(origin, r.Host) {
				return models.NewError(models.EFORBIDDEN, models.M("err.csrf"))
			}
			want := base.ExpectedCSRF(c)
			if want == "" {
				// No token to match: refused before the body is read.
				return models.NewError(models.EFORBIDDEN, models.M("err.csrf"))
			}
			got := r.Header.Get("X-CSRF-Token")
			if got == "" {
				// The body only: a token in the query string ends up in
				// logs, history and Referer headers. Of an upload only
				// its first field is read here (formCSRF).
				got = formCSRF(r)
			}
			if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
				return models.NewError(models.EFORBIDDEN, models.M("err.csrf"))
			}
			return next(c)
		}
	}
}

func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, host)
}

// requireUser sends anonymous visitors to the sign-in page.
func requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if models.UserFromContext(c.Request().Context()) == nil {
			return models.NewError(models.EUNAUTHORIZED, models.M("err.unauthorized"))
		}
		return next(c)
	}
}

// requireAdmin refuses everyone but admins.
func requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := models.UserFromContext(c.Request().Context())
		if u == nil {
			return models.NewError(models.EUNAUTHORIZED, models.M("err.unauthorized"))
		}
		if !u.IsAdmin {
			return models.NewError(models.EFORBIDDEN, models.M("err.forbidden"))
		}
		return next(c)
	}
}

// tokenAuth authenticates API calls by personal token only; the session
// cookie is never looked at under /api/, so CSRF cannot reach the API.
func tokenAuth(base *handlers.Base) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			plain, ok := strings.CutPrefix(h, "Bearer ")
			if !ok || strings.TrimSpace(plain) == "" {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="gpubook"`)
				return models.NewError(models.EUNAUTHORIZED, models.M("err.token_invalid"))
			}
			u, err := base.Store.UserByToken(c.Request().Context(), strings.TrimSpace(plain), base.Now())
			if err != nil {
				if models.ErrorCode(err) == models.EUNAUTHORIZED { // not when the database failed
					c.Response().Header().Set("WWW-Authenticate", `Bearer realm="gpubook", error="invalid_token"`)
				}
				return err
			}
			ctx := models.WithClientIP(c.Request().Context(), c.RealIP())
			c.SetRequest(c.Request().WithContext(models.WithUser(ctx, u)))
			return next(c)
		}
	}
}

// staticCache lets browsers keep assets for a day.
func staticCache(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=86400")
		return next(c)
	}
}
