package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

func countSessions(t *testing.T, env *webtest.Env) int {
	t.Helper()
	var n int
	if err := env.DB.SQL.QueryRowContext(t.Context(), "SELECT count(*) FROM sessions").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCookielessRequestsStoreNoSession: looking at pages (or failing to post
// without a token) stores nothing; only something worth keeping, such as a
// sign-in, creates a session row.
func TestCookielessRequestsStoreNoSession(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			// Limits high enough that every post reaches its handler (the
			// anonymous writes' limit is three times the sign-in rate).
			env := webtest.New(t, d, func(c *web.Config) { c.SignInRate = web.Rate{PerMinute: 1e6, Burst: 1e6} })
			requests := []func(c *webtest.Client) *webtest.Response{
				func(c *webtest.Client) *webtest.Response { return c.Get("/") },
				func(c *webtest.Client) *webtest.Response { return c.Get("/login?next=/calendar") },
				func(c *webtest.Client) *webtest.Response { return c.Get("/no/such/page") },
				func(c *webtest.Client) *webtest.Response { return c.Get("/calendar") },
				func(c *webtest.Client) *webtest.Response { return c.Get("/static/css/app.css") },
				func(c *webtest.Client) *webtest.Response {
					return c.Post("/login/dev", url.Values{"email": {"x@example.org"}})
				},
				func(c *webtest.Client) *webtest.Response { return c.Post("/lang", url.Values{"to": {"zh-CN"}}) },
				func(c *webtest.Client) *webtest.Response { return c.Post("/logout", nil) },
			}
			for i := range 500 {
				res := requests[i%len(requests)](env.Client())
				if res.Code >= 500 {
					t.Fatalf("request %d: %d", i, res.Code)
				}
			}
			if got := countSessions(t, env); got != 0 {
				t.Errorf("session rows after 500 cookie-less requests = %d, want 0", got)
			}
			c := env.Client()
			c.SignIn("ann@example.org", "Ann")
			if got := countSessions(t, env); got != 1 {
				t.Errorf("session rows after a sign-in = %d, want 1", got)
			}
		})
	}
}

// TestPageViewsDoNotRewriteTheSession: a signed-in page view reads the
// session row but does not write it again (scs's idle timeout did, every
// time); gpubook's own last-seen mark is written at most once a minute.
func TestPageViewsDoNotRewriteTheSession(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			c := env.Client()
			c.SignIn("ann@example.org", "Ann")
			c.Get("/")
			row := func() string {
				var data, expiry string
				if err := env.DB.SQL.QueryRowContext(t.Context(), "SELECT data, expiry FROM sessions").Scan(&data, &expiry); err != nil {
					t.Fatal(err)
				}
				return expiry + " " + data
			}
			before := row()
			for range 20 {
				if res := c.Get("/calendar"); res.Code != http.StatusOK {
					t.Fatalf("calendar: %d", res.Code)
				}
			}
			if after := row(); after != before {
				t.Errorf("session row rewritten by page views:\n before %.80s\n after  %.80s", before, after)
			}
			if signedInAs(c) == "" {
				t.Error("signed out by the page views")
			}
		})
	}
}

func TestCSRFTokenOnlyFromBodyOrHeader(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite")
	c := env.Client()
	c.SignIn("ann@example.org", "Ann")
	c.Get("/profile")
	res := c.Do(formRequest("/profile/tokens?_csrf="+url.QueryEscape(c.CSRF), url.Values{"name": {"x"}}))
	if res.Code != http.StatusForbidden {
		t.Errorf("token in the query string: %d, want 403", res.Code)
	}
	if res := c.Post("/profile/tokens", url.Values{"name": {"x"}}); res.Code != http.StatusCreated {
		t.Errorf("token in the body: %d, want 201", res.Code)
	}
}

func TestCSRFTokenRotatesAtSignIn(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite")
	c := env.Client()
	c.Get("/login")
	before := c.CSRF
	c.SignIn("ann@example.org", "Ann")
	c.Get("/profile")
	if before == "" || c.CSRF == "" || c.CSRF == before {
		t.Fatalf("CSRF token before sign-in %q, after %q: want two different tokens", before, c.CSRF)
	}
	if res := c.Post("/profile/tokens", url.Values{"name": {"x"}, "_csrf": {before}}); res.Code != http.StatusForbidden {
		t.Errorf("post with the token from before sign-in: %d, want 403", res.Code)
	}
	// Signing out and in again rotates it again.
	after := c.CSRF
	c.Post("/logout", nil)
	c.SignIn("ann@example.org", "Ann")
	c.Get("/profile")
	if c.CSRF == after {
		t.Error("the token survived signing out and in again")
	}
}

func TestLanguageSwitchIsAPost(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite")
	c := env.Client()
	c.SignIn("ann@example.org", "Ann")
	if res := c.Get("/lang?to=zh-CN&next=/"); res.Code < 400 {
		t.Errorf("GET /lang: %d, want a refusal", res.Code)
	}
	if u, _ := env.DB.UserByEmail(t.Context(), "ann@example.org"); u.Language != "" {
		t.Errorf("language after GET /lang = %q, want unchanged", u.Language)
	}
	page := c.Get("/calendar?day=2030-01-07")
	form := page.Doc.Find(`form[data-testid="lang-form"][method="post"][action="/lang"]`)
	next, _ := form.Find(`input[name="next"]`).Attr("value")
	to, _ := form.Find(`button[data-testid="lang-zh-CN"]`).Attr("value")
	if form.Length() != 1 || next != "/calendar?day=2030-01-07" || to != "zh-CN" {
		t.Fatalf("language form: %d forms, next %q, button value %q", form.Length(), next, to)
	}
	res := c.Post("/lang", url.Values{"to": {to}, "next": {next}})
	if res.Code != http.StatusSeeOther || res.Header().Get("Location") != next {
		t.Errorf("POST /lang: %d to %q", res.Code, res.Header().Get("Location"))
	}
	if u, _ := env.DB.UserByEmail(t.Context(), "ann@example.org"); u.Language != "zh-CN" {
		t.Errorf("language after POST /lang = %q, want zh-CN", u.Language)
	}
	// An anonymous visitor switches too, with the token of the page's form.
	anon := env.Client()
	anon.Get("/")
	anon.Post("/lang", url.Values{"to": {"zh-CN"}, "next": {"/"}})
	if lang, _ := anon.Get("/").Doc.Find("html").Attr("lang"); lang != "zh-CN" {
		t.Errorf("anonymous visitor after the switch: lang=%q", lang)
	}
}

func TestStaticDirectoriesAreNotListed(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite")
	c := env.Client()
	for _, p := range []string{"/static/", "/static/css/", "/static/css", "/static/js/", "/static/css/../", "/static/nope.css"} {
		res := c.Get(p)
		if body := res.Body.String(); res.Code != http.StatusNotFound || strings.Contains(body, `href="app.css"`) || strings.Contains(body, `href="css/"`) {
			t.Errorf("GET %s: %d, want 404 without a listing", p, res.Code)
		}
	}
	if res := c.Get("/static/css/app.css"); res.Code != http.StatusOK {
		t.Errorf("GET /static/css/app.css: %d", res.Code)
	}
}
