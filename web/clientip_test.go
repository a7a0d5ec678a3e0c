package web_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// from sends req from the peer address remote with forwarding headers that
// the client chose (each of xff, realIP only when not empty).
func from(req *http.Request, remote, xff, realIP string) *http.Request {
	req.RemoteAddr = remote + ":40000"
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	if realIP != "" {
		req.Header.Set("X-Real-IP", realIP)
	}
	return req
}

func formRequest(path string, form url.Values) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func bearerRequest(method, path, tok, body string) *http.Request {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// forged is a new made-up client address for each attempt.
func forged(i int) string { return fmt.Sprintf("203.0.113.%d", i+1) }

// TestRateLimitsIgnoreForgedHeaders sends each attempt with a new
// X-Forwarded-For and X-Real-IP from one peer: the limits still hold.
func TestRateLimitsIgnoreForgedHeaders(t *testing.T) {
	t.Parallel()
	t.Run("sign-in", func(t *testing.T) {
		env := webtest.New(t, "sqlite", func(c *web.Config) { c.SignInRate = web.Rate{PerMinute: 1, Burst: 2} })
		var codes []int
		for i := range 3 {
			c := env.Client() // a fresh visitor: a sign-in rotates the CSRF token
			c.Get("/login")
			form := url.Values{"email": {"x@example.org"}, "name": {"X"}, "_csrf": {c.CSRF}}
			codes = append(codes, c.Do(from(formRequest("/login/dev", form), "192.0.2.10", forged(i), forged(i+100))).Code)
		}
		if codes[2] != http.StatusTooManyRequests {
			t.Errorf("sign-in attempts with forged addresses: %v, want the third refused", codes)
		}
	})
	t.Run("enrolment", func(t *testing.T) {
		env := webtest.New(t, "sqlite", func(c *web.Config) { c.SignInRate = web.Rate{PerMinute: 1, Burst: 2} })
		var codes []int
		for i := range 3 {
			req := httptest.NewRequest(http.MethodPost, wire.PathEnroll, strings.NewReader(`{"token":"gpbe_nope`+forged(i)+`"}`))
			req.Header.Set("Content-Type", "application/json")
			codes = append(codes, env.Client().Do(from(req, "192.0.2.10", forged(i), forged(i+100))).Code)
		}
		if codes[0] != http.StatusUnauthorized || codes[2] != http.StatusTooManyRequests {
			t.Errorf("enrolments with forged addresses: %v, want 401 then the third refused", codes)
		}
	})
	t.Run("API authentication failures", func(t *testing.T) {
		env := webtest.New(t, "sqlite", func(c *web.Config) { c.APIFailRate = web.Rate{PerMinute: 1, Burst: 3} })
		u := env.AddUser("ann@example.org", "Ann", false)
		_, plain, err := env.DB.CreateToken(t.Context(), u.ID, "t", time.Now(), models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		var codes []int
		for i := range 5 {
			req := bearerRequest(http.MethodGet, "/api/v1/me", fmt.Sprintf("gpb_random%d", i), "")
			codes = append(codes, env.Client().Do(from(req, "192.0.2.10", forged(i), forged(i+100))).Code)
		}
		want := []int{401, 401, 401, 429, 429}
		if fmt.Sprint(codes) != fmt.Sprint(want) {
			t.Errorf("random tokens from one peer: %v, want %v", codes, want)
		}
		// Refused before the lookup: even the right token is turned away
		// from that address, while another address is served.
		if res := env.Client().Do(from(bearerRequest(http.MethodGet, "/api/v1/me", plain, ""), "192.0.2.10", "", "")); res.Code != http.StatusTooManyRequests || res.Header().Get("Retry-After") == "" {
			t.Errorf("valid token from the blocked address: %d (Retry-After %q), want 429", res.Code, res.Header().Get("Retry-After"))
		}
		if res := env.Client().Do(from(bearerRequest(http.MethodGet, "/api/v1/me", plain, ""), "192.0.2.11", "", "")); res.Code != http.StatusOK {
			t.Errorf("valid token from another address: %d, want 200", res.Code)
		}
		// The agent API shares the budget: node credentials are guessed the same way.
		if res := env.Client().Do(from(bearerRequest(http.MethodPost, wire.APIPrefix+"/heartbeat", "gpbn_guess", "{}"), "192.0.2.10", "", "")); res.Code != http.StatusTooManyRequests {
			t.Errorf("agent API from the blocked address: %d, want 429", res.Code)
		}
		for i := range 3 {
			req := bearerRequest(http.MethodPost, wire.APIPrefix+"/heartbeat", "gpbn_guess", "{}")
			if res := env.Client().Do(from(req, "192.0.2.12", forged(i), "")); res.Code != http.StatusUnauthorized {
				t.Errorf("agent API guess %d from a fresh address: %d, want 401", i, res.Code)
			}
		}
		if res := env.Client().Do(from(bearerRequest(http.MethodPost, wire.APIPrefix+"/heartbeat", "gpbn_guess", "{}"), "192.0.2.12", "", "")); res.Code != http.StatusTooManyRequests {
			t.Errorf("fourth agent API guess: %d, want 429", res.Code)
		}
	})
}

// signInFrom signs in through the development sign-in from a peer address
// with the given forwarding headers and returns the address the audit log
// recorded for it.
func signInFrom(t *testing.T, env *webtest.Env, email, remote, xff, realIP string) string {
	t.Helper()
	c := env.Client()
	c.Get("/login")
	form := url.Values{"email": {email}, "name": {"Someone"}, "_csrf": {c.CSRF}}
	if res := c.Do(from(formRequest("/login/dev", form), remote, xff, realIP)); res.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", res.Code)
	}
	u, err := env.DB.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	events, err := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: models.AuditSignIn, ActorID: u.ID})
	if err != nil || len(events) != 1 {
		t.Fatalf("sign-in events: %v, %v", events, err)
	}
	return events[0].IP
}

func TestClientAddress(t *testing.T) {
	t.Parallel()
	_, proxies, _ := net.ParseCIDR("192.0.2.0/28")
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			direct := webtest.New(t, d)
			behind := webtest.New(t, d, func(c *web.Config) { c.TrustedProxies = []*net.IPNet{proxies} })
			tests := []struct {
				name                string
				env                 *webtest.Env
				remote, xff, realIP string
				want                string
			}{
				{"no proxies: headers ignored", direct, "198.51.100.20", "203.0.113.1", "203.0.113.2", "198.51.100.20"},
				{"no proxies: a private peer is not a proxy", direct, "10.0.0.1", "203.0.113.1", "", "10.0.0.1"},
				{"behind the proxy: right-most untrusted", behind, "192.0.2.1", "203.0.113.66, 198.51.100.7, 192.0.2.2", "", "198.51.100.7"},
				{"behind the proxy: X-Real-IP ignored", behind, "192.0.2.1", "", "203.0.113.2", "192.0.2.1"},
				{"a loopback peer is not trusted unless named", behind, "127.0.0.1", "198.51.100.7", "", "127.0.0.1"},
				{"a private peer outside the list", behind, "10.0.0.1", "198.51.100.7", "", "10.0.0.1"},
			}
			for i, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					got := signInFrom(t, tt.env, fmt.Sprintf("u%d@example.org", i), tt.remote, tt.xff, tt.realIP)
					if got != tt.want {
						t.Errorf("audit IP = %q, want %q", got, tt.want)
					}
				})
			}
		})
	}
}

// TestRateLimitBehindProxy: behind a trusted proxy each client has its own
// budget, and forging the left part of X-Forwarded-For does not buy more.
func TestRateLimitBehindProxy(t *testing.T) {
	t.Parallel()
	_, proxies, _ := net.ParseCIDR("192.0.2.0/28")
	env := webtest.New(t, "sqlite", func(c *web.Config) {
		c.TrustedProxies = []*net.IPNet{proxies}
		c.SignInRate = web.Rate{PerMinute: 1, Burst: 2}
	})
	attempt := func(xff string) int {
		c := env.Client()
		c.Get("/login")
		form := url.Values{"email": {"x@example.org"}, "name": {"X"}, "_csrf": {c.CSRF}}
		return c.Do(from(formRequest("/login/dev", form), "192.0.2.1", xff, "")).Code
	}
	var codes []int
	for i := range 3 {
		codes = append(codes, attempt(forged(i)+", 198.51.100.7"))
	}
	if codes[2] != http.StatusTooManyRequests {
		t.Errorf("one client with forged left parts: %v, want the third refused", codes)
	}
	if got := attempt("198.51.100.8"); got == http.StatusTooManyRequests {
		t.Errorf("another client behind the same proxy: %d, want its own budget", got)
	}
}
