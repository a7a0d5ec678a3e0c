package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// wantSSOFailure checks that a callback ended on the failure page with
// reason, signed nobody in and left an audit event that names the reason.
func wantSSOFailure(t *testing.T, env *webtest.Env, c *webtest.Client, res *webtest.Response, status int, reason string) {
	t.Helper()
	if res.Code != status || res.Doc == nil {
		t.Fatalf("status = %d, want %d: %s", res.Code, status, res.Body.String())
	}
	if got, _ := res.Doc.Find(`[data-testid="sso-failure"]`).Attr("data-reason"); got != reason {
		t.Errorf("reason = %q, want %q", got, reason)
	}
	if who := signedInAs(c); who != "" {
		t.Errorf("a failure signed in %q", who)
	}
	events, _ := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: models.AuditSignInFailed})
	if len(events) == 0 || !strings.Contains(events[0].Details, reason) {
		t.Errorf("no audit event for %s: %+v", reason, events)
	}
}

// TestSSOUnverifiedEmailDoesNotTakeOverAccounts is the attack: an IdP user
// who typed the admin's email (unverified) must not get the admin account,
// and the real admin must still get in afterwards, exactly once.
func TestSSOUnverifiedEmailDoesNotTakeOverAccounts(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			p := startIdP(t)
			env := ssoEnv(t, d, p)
			admin := env.AddUser("root@example.org", "Root", true)

			attacker := env.Client()
			res := ssoSignIn(t, attacker, p, &mockoidc.MockUser{Subject: "attacker", Email: "ROOT@example.org", PreferredUsername: "mallory"})
			wantSSOFailure(t, env, attacker, res, http.StatusForbidden, "sso.fail.unverified")
			if u, _ := env.DB.User(t.Context(), admin.ID); u.Subject != "" {
				t.Fatalf("admin account linked to %q", u.Subject)
			}
			events, _ := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: models.AuditSignInFailed})
			if len(events) == 0 || !strings.Contains(events[0].Details, "root@example.org") {
				t.Errorf("the failed attempt does not name the account: %+v", events)
			}

			real := env.Client()
			res = ssoSignIn(t, real, p, &mockoidc.MockUser{Subject: "real-admin", Email: "root@example.org", PreferredUsername: "root", EmailVerified: true})
			if res.Code != http.StatusSeeOther || signedInAs(real) != "root" {
				t.Fatalf("real admin: %d %q %s", res.Code, signedInAs(real), res.Body.String())
			}
			u, _ := env.DB.User(t.Context(), admin.ID)
			if u.Subject != "real-admin" || !u.IsAdmin {
				t.Fatalf("admin after linking = %+v", u)
			}
			if links, _ := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: models.AuditUserSSOLink}); len(links) != 1 {
				t.Errorf("link events = %d, want 1", len(links))
			}

			// A second subject with the same, verified, email: an error page, not the account.
			other := env.Client()
			res = ssoSignIn(t, other, p, &mockoidc.MockUser{Subject: "other", Email: "root@example.org", PreferredUsername: "x", EmailVerified: true})
			wantSSOFailure(t, env, other, res, http.StatusConflict, "sso.fail.account_linked")
			if u, _ := env.DB.User(t.Context(), admin.ID); u.Subject != "real-admin" {
				t.Errorf("admin re-linked to %q", u.Subject)
			}

			// The admin still signs in; an unverified email of nobody's makes a new account.
			if res := ssoSignIn(t, env.Client(), p, &mockoidc.MockUser{Subject: "real-admin", Email: "root@example.org", PreferredUsername: "root"}); res.Code != http.StatusSeeOther {
				t.Errorf("admin again: %d", res.Code)
			}
			newbie := env.Client()
			if res := ssoSignIn(t, newbie, p, &mockoidc.MockUser{Subject: "new", Email: "new@example.org", PreferredUsername: "new"}); res.Code != http.StatusSeeOther || signedInAs(newbie) != "new" {
				t.Errorf("new user with an unverified email: %d", res.Code)
			}
			if n, _ := env.DB.CountUsers(t.Context()); n != 2 {
				t.Errorf("users = %d, want 2 (root and new)", n)
			}
		})
	}
}

// TestSSOLinkUnverifiedAlways is the operator's way for an IdP that sends
// no email_verified but owns every address (Entra ID).
func TestSSOLinkUnverifiedAlways(t *testing.T) {
	t.Parallel()
	p := startIdP(t)
	env := ssoEnv(t, "sqlite", p, func(c *web.Config) { c.SSO.LinkUnverified = models.LinkUnverifiedAlways })
	admin := env.AddUser("root@example.org", "Root", true)
	c := env.Client()
	if res := ssoSignIn(t, c, p, &mockoidc.MockUser{Subject: "s", Email: "root@example.org", PreferredUsername: "root"}); res.Code != http.StatusSeeOther {
		t.Fatalf("callback: %d", res.Code)
	}
	if u, _ := env.DB.User(t.Context(), admin.ID); u.Subject != "s" {
		t.Errorf("subject = %q", u.Subject)
	}
}

// TestSSOSubjectSetInAdvance is the admin's per-person way: an account made
// with its IdP subject ("gpubook user add --sso-subject") is that subject's,
// whatever email it presents.
func TestSSOSubjectSetInAdvance(t *testing.T) {
	t.Parallel()
	p := startIdP(t)
	env := ssoEnv(t, "sqlite", p)
	u := &models.User{Email: "ops@example.org", Name: "Ops", Subject: "ops-sub"}
	must(t, env.DB.CreateUser(t.Context(), u, models.CLIActor))
	c := env.Client()
	if res := ssoSignIn(t, c, p, &mockoidc.MockUser{Subject: "ops-sub", Email: "ops@example.org", PreferredUsername: "ops"}); res.Code != http.StatusSeeOther || signedInAs(c) != "ops" {
		t.Fatalf("callback: %d %q", res.Code, signedInAs(c))
	}
}

// TestSSOClaimsMeetTheFormRules sends claims no form would accept.
func TestSSOClaimsMeetTheFormRules(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			p := startIdP(t)
			env := ssoEnv(t, d, p)
			t.Run("email that is not an email", func(t *testing.T) {
				c := env.Client()
				res := ssoSignIn(t, c, p, &mockoidc.MockUser{Subject: "bad-email", Email: "root@example.org\r\nbcc: x@y.org", PreferredUsername: "x"})
				wantSSOFailure(t, env, c, res, http.StatusForbidden, "sso.fail.bad_email")
				if n, _ := env.DB.CountUsers(t.Context()); n != 0 {
					t.Errorf("users = %d", n)
				}
			})
			t.Run("long name with control characters and a 300-character team", func(t *testing.T) {
				c := env.Client()
				name := "Eve\r\nAdmin\x00" + strings.Repeat("名", 5000)
				res := ssoSignIn(t, c, p, &mockoidc.MockUser{Subject: "long", Email: "eve@example.org", PreferredUsername: name, EmailVerified: true,
					Groups: []string{"gpu-team-" + strings.Repeat("t", 300), "gpu-team-ok", "gpu-team-nul\x00"}})
				if res.Code != http.StatusSeeOther {
					t.Fatalf("callback: %d %s", res.Code, res.Body.String())
				}
				u, err := env.DB.UserByEmail(t.Context(), "eve@example.org")
				if err != nil {
					t.Fatal(err)
				}
				if want := "Eve Admin " + strings.Repeat("名", 200-len("Eve Admin ")); u.Name != want {
					t.Errorf("name = %q (%d characters)", u.Name, len([]rune(u.Name)))
				}
				if roles := teamRoles(t, env, u.ID); len(roles) != 1 || roles["ok"] != "member/idp" {
					t.Errorf("teams = %v", roles)
				}
			})
		})
	}
}
