package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

func TestProbes(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			c := env.Client()
			if res := c.Get("/healthz"); res.Code != http.StatusOK {
				t.Errorf("healthz = %d", res.Code)
			}
			if res := c.Get("/readyz"); res.Code != http.StatusOK {
				t.Errorf("readyz = %d", res.Code)
			}
			env.DB.Close()
			if res := c.Get("/readyz"); res.Code != http.StatusServiceUnavailable {
				t.Errorf("readyz with the database gone = %d, want 503", res.Code)
			}
			if res := c.Get("/healthz"); res.Code != http.StatusOK {
				t.Errorf("healthz with the database gone = %d, want 200", res.Code)
			}
		})
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, store.SQLite)
	res := env.Client().Get("/")
	for h, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "same-origin",
		"X-Frame-Options":        "DENY",
	} {
		if got := res.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	csp := res.Header().Get("Content-Security-Policy")
	for _, part := range []string{"script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, part) {
			t.Errorf("CSP %q lacks %q", csp, part)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	if res.Header().Get("Strict-Transport-Security") != "" {
		t.Error("HSTS on a plain-http base URL")
	}
	if res.Header().Get(echo.HeaderXRequestID) == "" {
		t.Error("no request ID")
	}
	https := webtest.New(t, store.SQLite, func(c *web.Config) { c.BaseURL = "https://gpu.example.org" })
	if https.Client().Get("/").Header().Get("Strict-Transport-Security") == "" {
		t.Error("no HSTS on an https base URL")
	}
}

func TestErrorPages(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, store.SQLite)
	env.Server.Echo.GET("/boom", func(c echo.Context) error { panic("kaboom") })
	c := env.Client()

	res := c.Get("/no/such/page")
	if res.Code != http.StatusNotFound || res.Doc.Find(`[data-testid="error-page"]`).Length() != 1 {
		t.Errorf("404: %d %s", res.Code, res.Body.String())
	}
	res = c.Get("/boom")
	if res.Code != http.StatusInternalServerError || res.Doc == nil {
		t.Fatalf("panic: %d %q", res.Code, res.Body.String())
	}
	if body := res.Body.String(); strings.Contains(body, "kaboom") || !strings.Contains(body, res.Header().Get(echo.HeaderXRequestID)) {
		t.Errorf("500 page leaks the cause or lacks the request ID: %s", body)
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/nothing", nil)
	res = c.Do(req)
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(res.Body.Bytes(), &body); err != nil || res.Code != http.StatusNotFound && res.Code != http.StatusUnauthorized || body.Error.Code == "" {
		t.Errorf("API error: %d %s", res.Code, res.Body.String())
	}
}

func TestStaticAssets(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, store.SQLite)
	// Files of 1,400 bytes or more go out compressed (app.js is smaller).
	for _, path := range []string{"/static/css/app.css", "/static/js/htmx.min.js", "/static/js/calendar.js"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		res := env.Client().Do(req)
		if res.Code != http.StatusOK || !strings.Contains(res.Header().Get("Cache-Control"), "max-age") || res.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: %d cache=%q enc=%q", path, res.Code, res.Header().Get("Cache-Control"), res.Header().Get("Content-Encoding"))
		}
	}
}

func TestDevLogin(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			c := env.Client()
			res := c.Get("/login")
			if res.Code != http.StatusOK || res.Doc.Find(`[data-testid="dev-banner"]`).Length() != 1 {
				t.Fatalf("login page: %d", res.Code)
			}
			// No CSRF token: refused, nothing written.
			res = c.Post("/login/dev", url.Values{"email": {"a@example.org"}, "name": {"A"}, "_csrf": {"forged"}})
			if res.Code != http.StatusForbidden {
				t.Errorf("forged CSRF: %d", res.Code)
			}
			// Bad input: 422, each problem beside its field, nothing written.
			res = c.Post("/login/dev", url.Values{"email": {"not-an-email"}, "name": {"X"}})
			if res.Code != http.StatusUnprocessableEntity || res.Doc.Find(`[data-testid="error-email"]`).Length() != 1 {
				t.Errorf("bad email: %d", res.Code)
			}
			if n, _ := env.DB.CountUsers(t.Context()); n != 0 {
				t.Errorf("users after bad input = %d", n)
			}
			c.SignIn("First@Example.org", "First User")
			res = c.Get("/")
			if got := res.Doc.Find(`[data-testid="whoami"]`).Text(); got != "First User" {
				t.Errorf("whoami = %q", got)
			}
			u, _ := env.DB.UserByEmail(t.Context(), "first@example.org")
			if !u.IsAdmin {
				t.Error("the first user of a fresh install should be an admin")
			}
			c2 := env.Client()
			c2.SignIn("second@example.org", "Second")
			if u2, _ := env.DB.UserByEmail(t.Context(), "second@example.org"); u2.IsAdmin {
				t.Error("only the first user becomes an admin")
			}
			res = c.Post("/logout", nil)
			if res.Code != http.StatusSeeOther {
				t.Errorf("logout: %d", res.Code)
			}
			if res := c.Get("/"); res.Doc.Find(`[data-testid="whoami"]`).Length() != 0 {
				t.Error("still signed in after logout")
			}
		})
	}
}

func TestDevLoginOffHasNoRoutes(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, store.SQLite, func(c *web.Config) { c.DevLogin = false })
	c := env.Client()
	if res := c.Get("/login"); res.Code != http.StatusNotFound {
		t.Errorf("GET /login = %d, want 404", res.Code)
	}
	if res := c.Get("/"); res.Doc.Find(`[data-testid="dev-banner"]`).Length() != 0 {
		t.Error("dev banner shown with dev login off")
	}
}

func TestLanguages(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, store.SQLite)
	c := env.Client()
	c.Header.Set("Accept-Language", "zh-CN,zh;q=0.9")
	res := c.Get("/")
	if lang, _ := res.Doc.Find("html").Attr("lang"); lang != "zh-CN" || !strings.Contains(res.Doc.Find("h1").Text(), "欢迎") {
		t.Errorf("Accept-Language zh: lang=%q h1=%q", lang, res.Doc.Find("h1").Text())
	}
	c.SignIn("wang@example.org", "王磊")
	res = c.Post("/lang", url.Values{"to": {"en"}, "next": {"/"}})
	if res.Code != http.StatusSeeOther {
		t.Fatalf("switch: %d", res.Code)
	}
	res = c.Get("/")
	if lang, _ := res.Doc.Find("html").Attr("lang"); lang != "en" {
		t.Errorf("after switch lang=%q", lang)
	}
	if u, _ := env.DB.UserByEmail(t.Context(), "wang@example.org"); u.Language != "en" {
		t.Errorf("profile language = %q, want en", u.Language)
	}
	if res := c.Post("/lang", url.Values{"to": {"fr"}}); res.Code != http.StatusUnprocessableEntity {
		t.Errorf("unknown language: %d", res.Code)
	}
	if res := c.Post("/lang", url.Values{"to": {"en"}, "next": {"https://evil.example"}}); res.Header().Get("Location") != "/" {
		t.Errorf("open redirect: Location=%q", res.Header().Get("Location"))
	}
}
