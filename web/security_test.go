package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// clock is a settable clock for session expiry tests.
type clock struct{ t atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Unix(c.t.Load(), 0) }
func (c *clock) Advance(d time.Duration) { c.t.Add(int64(d / time.Second)) }

func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		steps  []time.Duration // time between requests
		signed bool            // still signed in after the last step
	}{
		{"active use within the idle timeout", []time.Duration{11 * time.Hour, 11 * time.Hour, 11 * time.Hour}, true},
		{"idle too long", []time.Duration{12*time.Hour + 2*time.Minute}, false},
		{"absolute timeout despite activity", []time.Duration{10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour,
			10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour,
			10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var clk clock
			clk.t.Store(time.Now().Unix())
			env := webtest.New(t, "sqlite", func(c *web.Config) {
				c.Now, c.SessionIdle, c.SessionMaxAge = clk.Now, 12*time.Hour, 7*24*time.Hour
			})
			c := env.Client()
			c.SignIn("ann@example.org", "Ann")
			for _, d := range tt.steps {
				clk.Advance(d)
				c.Get("/")
			}
			if got := signedInAs(c) != ""; got != tt.signed {
				t.Errorf("signed in = %v, want %v", got, tt.signed)
			}
		})
	}
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite")
	c := env.Client()
	c.SignIn("ann@example.org", "Ann")
	c.Get("/profile")
	t.Run("form post without token", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, "/profile/tokens", strings.NewReader("name=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if res := c.Do(req); res.Code != http.StatusForbidden {
			t.Errorf("status %d, want 403", res.Code)
		}
	})
	t.Run("cross-site htmx request with the right token", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, "/profile/tokens", strings.NewReader("name=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("HX-Request", "true")
		req.Header.Set("X-CSRF-Token", c.CSRF)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		if res := c.Do(req); res.Code != http.StatusForbidden {
			t.Errorf("status %d, want 403", res.Code)
		}
	})
	t.Run("foreign origin", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, "/profile/tokens", strings.NewReader("name=x&_csrf="+c.CSRF))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		if res := c.Do(req); res.Code != http.StatusForbidden {
			t.Errorf("status %d, want 403", res.Code)
		}
	})
	t.Run("same-site htmx request with the header token", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, "/profile/tokens", strings.NewReader("name=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("HX-Request", "true")
		req.Header.Set("X-CSRF-Token", c.CSRF)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		if res := c.Do(req); res.Code != http.StatusCreated {
			t.Errorf("status %d, want 201", res.Code)
		}
	})
	toks, _ := env.DB.Tokens(t.Context(), 0)
	if len(toks) != 1 {
		t.Errorf("tokens = %d, want only the accepted request's", len(toks))
	}
}

func TestTokenLifecycle(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			c := env.Client()
			c.SignIn("ann@example.org", "Ann")
			c.Get("/profile")
			res := c.Post("/profile/tokens", url.Values{"name": {"laptop"}})
			plain := res.Doc.Find(`[data-testid="token-value"]`).Text()
			if res.Code != http.StatusCreated || !strings.HasPrefix(plain, models.TokenPrefix) || res.Header().Get("Cache-Control") != "no-store" {
				t.Fatalf("create: %d %q", res.Code, plain)
			}
			if page := c.Get("/profile"); strings.Contains(page.Body.String(), plain) {
				t.Error("token shown again")
			}
			api := func(tok string) int {
				req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				return env.Client().Do(req).Code
			}
			if got := api(plain); got != http.StatusOK {
				t.Errorf("API with the token: %d", got)
			}
			page := c.Get("/profile")
			if page.Doc.Find(`[data-testid="tokens-table"] tbody tr`).Length() != 1 || !strings.Contains(page.Doc.Find(`[data-testid="tokens-table"]`).Text(), "laptop") {
				t.Errorf("token list: %q", page.Doc.Find(`[data-testid="tokens-table"]`).Text())
			}
			toks, _ := env.DB.Tokens(t.Context(), 0)
			// Another user cannot revoke it: the id reveals nothing.
			other := env.Client()
			other.SignIn("bob@example.org", "Bob")
			other.Get("/profile")
			if res := other.Post("/profile/tokens/"+itoa(toks[0].ID)+"/revoke", nil); res.Code != http.StatusNotFound {
				t.Errorf("revoke someone else's token: %d", res.Code)
			}
			if res := c.Post("/profile/tokens/"+itoa(toks[0].ID)+"/revoke", url.Values{"confirm": {"yes"}}); res.Code != http.StatusSeeOther {
				t.Errorf("revoke: %d", res.Code)
			}
			if got := api(plain); got != http.StatusUnauthorized {
				t.Errorf("API with a revoked token: %d", got)
			}
			events, _ := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: "token."})
			if len(events) != 2 {
				t.Errorf("token audit events = %d, want create + revoke", len(events))
			}
		})
	}
}

func TestAPINeverAcceptsTheCookie(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite")
	c := env.Client()
	c.SignIn("ann@example.org", "Ann")
	if res := c.Get("/api/v1/me"); res.Code != http.StatusUnauthorized || res.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("API with only the session cookie: %d", res.Code)
	}
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite", func(c *web.Config) { c.APIRate = web.Rate{PerMinute: 60, Burst: 3} })
	u := env.AddUser("ann@example.org", "Ann", false)
	_, plain, _ := env.DB.CreateToken(t.Context(), u.ID, "t", time.Now(), models.CLIActor)
	var last *webtest.Response
	for range 5 {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+plain)
		last = env.Client().Do(req)
	}
	if last.Code != http.StatusTooManyRequests || last.Header().Get("Retry-After") == "" || !strings.Contains(last.Body.String(), `"rate_limited"`) {
		t.Errorf("5th call in a burst of 3: %d retry=%q %s", last.Code, last.Header().Get("Retry-After"), last.Body.String())
	}
	signIn := webtest.New(t, "sqlite", func(c *web.Config) { c.SignInRate = web.Rate{PerMinute: 1, Burst: 2} })
	codes := []int{}
	for range 3 {
		c := signIn.Client() // a fresh visitor: a sign-in rotates the CSRF token
		c.Get("/login")
		codes = append(codes, c.Post("/login/dev", url.Values{"email": {"x@example.org"}, "name": {"X"}}).Code)
	}
	if codes[2] != http.StatusTooManyRequests {
		t.Errorf("sign-in attempts: %v, want the third refused", codes)
	}
}
