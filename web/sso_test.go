package web_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// idp is a real OpenID Connect provider (mockoidc) whose token responses a
// test may tamper with, to present gpubook an ID token for another audience.
type idp struct {
	*mockoidc.MockOIDC
	wrongAudience atomic.Bool
	// endSession, when set, is advertised as end_session_endpoint.
	endSession atomic.Value
}

func startIdP(t *testing.T) *idp {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &idp{MockOIDC: m}
	m.AddMiddleware(p.tamper)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return p
}

// tamper re-signs the ID token with another audience when asked to.
func (p *idp) tamper(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if end, _ := p.endSession.Load().(string); end != "" && strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration") {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var doc map[string]any
			json.Unmarshal(rec.Body.Bytes(), &doc)
			doc["end_session_endpoint"] = end
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(doc)
			return
		}
		if !p.wrongAudience.Load() || !strings.HasSuffix(r.URL.Path, "/token") {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var body map[string]any
		json.Unmarshal(rec.Body.Bytes(), &body)
		raw, _ := body["id_token"].(string)
		claims := jwt.MapClaims{}
		jwt.NewParser().ParseUnverified(raw, claims)
		claims["aud"] = "someone-else"
		body["id_token"], _ = p.Keypair.SignJWT(claims)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(body)
	})
}

func ssoEnv(t *testing.T, dialect string, p *idp, opts ...func(*web.Config)) *webtest.Env {
	t.Helper()
	cfg := p.Config()
	return webtest.New(t, dialect, append([]func(*web.Config){func(c *web.Config) {
		c.BaseURL = "http://gpubook.test"
		c.SSO = &handlers.SSOConfig{Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
			Scopes: []string{"openid", "profile", "email", "groups"}, GroupsClaim: "groups", AdminGroups: []string{"gpu-admins"},
			TeamPrefix: "gpu-team-", LeadSuffix: "-leads", RedirectURL: "http://gpubook.test/auth/oidc/callback", PostLogout: "http://gpubook.test/"}
	}}, opts...)...)
}

// toIdP follows the redirect to the IdP and returns gpubook's callback path.
func toIdP(t *testing.T, res *webtest.Response) string {
	t.Helper()
	if res.Code != http.StatusFound {
		t.Fatalf("start: %d %s", res.Code, res.Body.String())
	}
	auth, _ := url.Parse(res.Header().Get("Location"))
	q := auth.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("nonce") == "" {
		t.Fatalf("authorization request lacks PKCE, state or nonce: %s", auth)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Get(auth.String())
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	cb, _ := url.Parse(r.Header.Get("Location"))
	return cb.RequestURI()
}

func ssoSignIn(t *testing.T, c *webtest.Client, p *idp, u mockoidc.User) *webtest.Response {
	t.Helper()
	p.QueueUser(u)
	return c.Get(toIdP(t, c.Get("/auth/oidc/start?next=/profile")))
}

func signedInAs(c *webtest.Client) string {
	return c.Get("/").Doc.Find(`[data-testid="whoami"]`).Text()
}

func TestSSOSignInMapsGroups(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			p := startIdP(t)
			env := ssoEnv(t, d, p)
			c := env.Client()
			user := &mockoidc.MockUser{Subject: "u-1", Email: "li.na@example.org", PreferredUsername: "lina", EmailVerified: true,
				Groups: []string{"gpu-team-vision-leads", "gpu-team-nlp", "gpu-admins"}}
			res := ssoSignIn(t, c, p, user)
			if res.Code != http.StatusSeeOther || res.Header().Get("Location") != "/profile" {
				t.Fatalf("callback: %d %q %s", res.Code, res.Header().Get("Location"), res.Body.String())
			}
			if got := signedInAs(c); got != "lina" {
				t.Errorf("signed in as %q", got)
			}
			u, err := env.DB.UserByEmail(t.Context(), "li.na@example.org")
			if err != nil || u.Subject != "u-1" || !u.IsAdmin {
				t.Fatalf("user = %+v, %v", u, err)
			}
			roles := teamRoles(t, env, u.ID)
			if roles["vision"] != "lead/idp" || roles["nlp"] != "member/idp" || len(roles) != 2 {
				t.Errorf("teams = %v", roles)
			}
			// Second sign-in after the directory changed: out of nlp, no longer lead or admin.
			c2 := env.Client()
			user.Groups = []string{"gpu-team-vision"}
			ssoSignIn(t, c2, p, user)
			roles = teamRoles(t, env, u.ID)
			if roles["vision"] != "member/idp" || len(roles) != 1 {
				t.Errorf("teams after group change = %v", roles)
			}
			if u, _ := env.DB.User(t.Context(), u.ID); u.IsAdmin {
				t.Error("admin kept after leaving the admin group")
			}
			events, _ := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: models.AuditSignIn})
			if len(events) != 2 {
				t.Errorf("sign-in events = %d, want 2", len(events))
			}
			// Sign-out ends the session (mockoidc has no end_session_endpoint: local only).
			c.Get("/")
			res = c.Post("/logout", nil)
			if res.Code != http.StatusSeeOther || res.Header().Get("Location") != "/" || signedInAs(c) != "" {
				t.Errorf("logout: %d %q", res.Code, res.Header().Get("Location"))
			}
		})
	}
}

func teamRoles(t *testing.T, env *webtest.Env, userID int64) map[string]string {
	t.Helper()
	ms, err := env.DB.MembershipsOf(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range ms {
		out[m.TeamName] = m.Role + "/" + m.Source
	}
	return out
}

func TestSSOFailures(t *testing.T) {
	t.Parallel()
	p := startIdP(t)
	good := &mockoidc.MockUser{Subject: "u-2", Email: "anna@example.org", PreferredUsername: "anna", Groups: []string{}}
	failure := func(t *testing.T, env *webtest.Env, c *webtest.Client, res *webtest.Response, status int, reason string) {
		t.Helper()
		if res.Code != status {
			t.Errorf("status = %d, want %d: %s", res.Code, status, res.Body.String())
		}
		if got, _ := res.Doc.Find(`[data-testid="sso-failure"]`).Attr("data-reason"); got != reason {
			t.Errorf("reason = %q, want %q", got, reason)
		}
		if res.Doc.Find(`[data-testid="sso-retry"]`).Length() != 1 {
			t.Error("no try-again link")
		}
		if who := signedInAs(c); who != "" {
			t.Errorf("a failure signed in %q", who)
		}
		events, _ := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: models.AuditSignInFailed})
		if len(events) == 0 || !strings.Contains(events[0].Details, reason) {
			t.Errorf("no audit event for %s: %+v", reason, events)
		}
	}
	t.Run("bad state", func(t *testing.T) {
		env := ssoEnv(t, "sqlite", p)
		c := env.Client()
		p.QueueUser(good)
		cb := toIdP(t, c.Get("/auth/oidc/start"))
		cb = strings.Replace(cb, "state=", "state=x", 1)
		failure(t, env, c, c.Get(cb), http.StatusBadRequest, "sso.fail.state")
	})
	t.Run("replayed code", func(t *testing.T) {
		env := ssoEnv(t, "sqlite", p)
		c := env.Client()
		p.QueueUser(good)
		cb := toIdP(t, c.Get("/auth/oidc/start"))
		if res := c.Get(cb); res.Code != http.StatusSeeOther {
			t.Fatalf("first use: %d", res.Code)
		}
		c.Get("/")
		if res := c.Post("/logout", nil); res.Code != http.StatusSeeOther {
			t.Fatalf("logout: %d", res.Code)
		}
		code, _ := url.Parse(cb)
		fresh, _ := url.Parse(c.Get("/auth/oidc/start").Header().Get("Location"))
		replay := "/auth/oidc/callback?code=" + code.Query().Get("code") + "&state=" + fresh.Query().Get("state")
		failure(t, env, c, c.Get(replay), http.StatusBadGateway, "sso.fail.exchange")
	})
	t.Run("user cancelled", func(t *testing.T) {
		env := ssoEnv(t, "sqlite", p)
		c := env.Client()
		start, _ := url.Parse(c.Get("/auth/oidc/start").Header().Get("Location"))
		failure(t, env, c, c.Get("/auth/oidc/callback?error=access_denied&state="+start.Query().Get("state")), http.StatusBadRequest, "sso.fail.cancelled")
	})
	t.Run("another audience", func(t *testing.T) {
		env := ssoEnv(t, "sqlite", p)
		c := env.Client()
		p.wrongAudience.Store(true)
		defer p.wrongAudience.Store(false)
		p.QueueUser(good)
		failure(t, env, c, c.Get(toIdP(t, c.Get("/auth/oidc/start"))), http.StatusUnauthorized, "sso.fail.token")
	})
	t.Run("expired token", func(t *testing.T) {
		later := func() time.Time { return time.Now().Add(2 * time.Hour) }
		env := ssoEnv(t, "sqlite", p, func(c *web.Config) { c.Now = later })
		c := env.Client()
		p.QueueUser(good)
		failure(t, env, c, c.Get(toIdP(t, c.Get("/auth/oidc/start"))), http.StatusUnauthorized, "sso.fail.token")
	})
	t.Run("no email", func(t *testing.T) {
		env := ssoEnv(t, "sqlite", p)
		c := env.Client()
		p.QueueUser(&mockoidc.MockUser{Subject: "u-3", PreferredUsername: "ghost"})
		failure(t, env, c, c.Get(toIdP(t, c.Get("/auth/oidc/start"))), http.StatusForbidden, "sso.fail.no_email")
		if n, _ := env.DB.CountUsers(t.Context()); n != 0 {
			t.Errorf("a user without email was made (%d users)", n)
		}
	})
	t.Run("IdP down", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		dead := "http://" + ln.Addr().String()
		ln.Close()
		env := ssoEnv(t, "sqlite", p, func(c *web.Config) { c.SSO.Issuer = dead })
		c := env.Client()
		failure(t, env, c, c.Get("/auth/oidc/start"), http.StatusBadGateway, "sso.fail.idp_down")
	})
}

func TestSSOTurnsOffDevLogin(t *testing.T) {
	t.Parallel()
	p := startIdP(t)
	env := ssoEnv(t, "sqlite", p, func(c *web.Config) { c.DevLogin = true })
	c := env.Client()
	if res := c.Post("/login/dev", url.Values{"email": {"x@example.org"}, "name": {"X"}}); res.Code != http.StatusNotFound {
		t.Errorf("POST /login/dev = %d, want 404", res.Code)
	}
	res := c.Get("/login")
	if res.Doc.Find(`[data-testid="sso-start"]`).Length() != 1 || res.Doc.Find(`[data-testid="dev-banner"]`).Length() != 0 {
		t.Errorf("login page with SSO: %s", res.Body.String())
	}
	var buf bytes.Buffer
	buf.WriteString(res.Body.String())
	if strings.Contains(buf.String(), "dev-login-form") {
		t.Error("dev sign-in form shown with SSO configured")
	}
}

func TestSSOLogoutEndsTheIdPSession(t *testing.T) {
	t.Parallel()
	p := startIdP(t)
	p.endSession.Store("https://idp.example.org/logout")
	defer p.endSession.Store("")
	env := ssoEnv(t, "sqlite", p)
	c := env.Client()
	ssoSignIn(t, c, p, &mockoidc.MockUser{Subject: "u-9", Email: "ann@example.org", PreferredUsername: "ann"})
	c.Get("/")
	res := c.Post("/logout", nil)
	to, _ := url.Parse(res.Header().Get("Location"))
	q := to.Query()
	if res.Code != http.StatusSeeOther || to.Host != "idp.example.org" || to.Path != "/logout" || q.Get("id_token_hint") == "" ||
		q.Get("post_logout_redirect_uri") != "http://gpubook.test/" || q.Get("client_id") == "" {
		t.Errorf("logout: %d %q", res.Code, res.Header().Get("Location"))
	}
	if signedInAs(c) != "" {
		t.Error("still signed in at gpubook")
	}
	events, _ := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: models.AuditSignOut})
	if len(events) != 1 {
		t.Errorf("sign-out events = %d, want 1", len(events))
	}
}
