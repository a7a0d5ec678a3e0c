package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// ssoAdmin signs an admin in through the IdP (the development sign-in is
// off in SSO mode) and returns the client, ready to post admin forms.
func ssoAdmin(t *testing.T, env *webtest.Env, p *idp) *webtest.Client {
	t.Helper()
	c := env.Client()
	u := &mockoidc.MockUser{Subject: "ops", Email: "ops@lab.example", PreferredUsername: "Ops", EmailVerified: true, Groups: []string{"gpu-admins"}}
	if res := ssoSignIn(t, c, p, u); res.Code != http.StatusSeeOther {
		t.Fatalf("admin sign-in: %d %s", res.Code, res.Body.String())
	}
	return c
}

// bookFor books one GPU of the node for u, starting at the next half hour.
func bookFor(t *testing.T, env *webtest.Env, u *models.User, nodeID int64) {
	t.Helper()
	node, err := env.DB.Node(t.Context(), nodeID)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Truncate(30 * time.Minute).Add(30 * time.Minute)
	if _, err := env.DB.CreateBooking(t.Context(), models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID},
		StartsAt: start, EndsAt: start.Add(time.Hour)}, models.DefaultBookingLimits, time.Now(), models.CLIActor); err != nil {
		t.Fatal(err)
	}
}

// scheduleUsers lists the login of each booking the node's agent receives.
func scheduleUsers(t *testing.T, env *webtest.Env, cred string) []string {
	t.Helper()
	s, _ := agentSchedule(t, env, cred)
	var out []string
	for _, b := range s.Bookings {
		out = append(out, b.User)
	}
	return out
}

// TestSSOUnixClaimCannotTakeAssumedLogin is issue 36's second finding:
// anna.schmidt@example.org never had a login set, so gpubook assumes
// "anna.schmidt" and her booking reaches the node under it. A newcomer
// whose IdP claims "anna.schmidt" (or "admin", the admin's assumed login)
// is refused like a claim of an explicit login, and her booking stays on
// the node. Only an admin moves it: once the admin sets her real login
// (audited), the newcomer's claim is free to take the old name.
func TestSSOUnixClaimCannotTakeAssumedLogin(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			p := startIdP(t)
			env := ssoEnv(t, d, p, withUnixClaim)
			anna := env.AddUser("anna.schmidt@example.org", "Anna Schmidt", false)
			env.AddUser("admin@example.org", "Admin", true)
			nodeID, cred := agentNode(t, env, "gpu01", 2)
			bookFor(t, env, anna, nodeID)
			if got := scheduleUsers(t, env, cred); len(got) != 1 || got[0] != "anna.schmidt" {
				t.Fatalf("schedule before = %v, want [anna.schmidt]", got)
			}

			for _, uid := range []string{"anna.schmidt", "admin"} {
				c := env.Client()
				eve := &uidUser{MockUser: &mockoidc.MockUser{Subject: "eve-" + uid, Email: "eve." + uid + "@example.net",
					PreferredUsername: "Eve", EmailVerified: true, Groups: []string{}}, UID: uid}
				wantSSOFailure(t, env, c, ssoSignIn(t, c, p, eve), http.StatusConflict, "sso.fail.unix_taken")
				if _, err := env.DB.UserByEmail(t.Context(), "eve."+uid+"@example.net"); models.ErrorCode(err) != models.ENOTFOUND {
					t.Errorf("claim %s: the refused newcomer was kept: %v", uid, err)
				}
				if got := scheduleUsers(t, env, cred); len(got) != 1 || got[0] != "anna.schmidt" {
					t.Errorf("claim %s: schedule = %v, want [anna.schmidt]", uid, got)
				}
			}

			// An admin cannot hand it to someone else either, on the form.
			admin := ssoAdmin(t, env, p)
			bob := env.AddUser("bob@example.org", "Bob", false)
			bobPage := "/admin/users/" + itoa(bob.ID)
			admin.Get(bobPage)
			res := admin.Post(bobPage+"/unix", url.Values{"unix": {"bob"}, "unix_extra": {"anna.schmidt"}})
			if form := res.Doc.Find(`[data-testid="unix-form"]`).Text(); res.Code != http.StatusConflict || !strings.Contains(form, "anna.schmidt@example.org") {
				t.Errorf("admin gives bob her assumed login: %d, form %q; want 409 naming her", res.Code, form)
			}

			// The admin's action: her real login is aschmidt. The audit log
			// keeps it; the booking follows her; the name is free.
			annaPage := "/admin/users/" + itoa(anna.ID)
			admin.Get(annaPage)
			if res := admin.Post(annaPage+"/unix", url.Values{"unix": {"aschmidt"}}); res.Code != http.StatusSeeOther {
				t.Fatalf("admin sets her login: %d %s", res.Code, res.Body.String())
			}
			if got := scheduleUsers(t, env, cred); len(got) != 1 || got[0] != "aschmidt" {
				t.Errorf("schedule after the admin = %v, want [aschmidt]", got)
			}
			c := env.Client()
			newcomer := &uidUser{MockUser: &mockoidc.MockUser{Subject: "as2", Email: "a.schmidt2@example.net", PreferredUsername: "A. Schmidt",
				EmailVerified: true, Groups: []string{}}, UID: "anna.schmidt"}
			if res := ssoSignIn(t, c, p, newcomer); res.Code != http.StatusSeeOther {
				t.Errorf("claim of a freed name: %d %s", res.Code, res.Body.String())
			}
			if got := scheduleUsers(t, env, cred); len(got) != 1 || got[0] != "aschmidt" {
				t.Errorf("schedule after the newcomer = %v, want [aschmidt]", got)
			}
			events, _ := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: models.AuditUserUnix})
			if len(events) != 2 {
				t.Errorf("unix audit events = %d, want 2 (the admin's, the newcomer's)", len(events))
			}
		})
	}
}

// TestSSOLookalikeEmails: addresses that render like the admin's
// (admin@lab.example) but are other strings are refused when they hide an
// invisible character or mix scripts; a fullwidth one is folded (NFKC) to
// the real address and, since the IdP verified another string, it does
// not open the existing account.
func TestSSOLookalikeEmails(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			p := startIdP(t)
			env := ssoEnv(t, d, p)
			env.AddUser("admin@lab.example", "Admin", true)
			for _, tc := range []struct{ name, email, reason string }{
				{"zero-width space", "adm\u200bin@lab.example", "sso.fail.bad_email"},
				{"soft hyphen", "adm\u00adin@lab.example", "sso.fail.bad_email"},
				{"Cyrillic і", "adm\u0456n@lab.example", "sso.fail.bad_email"},
				{"Cyrillic а in the domain", "admin@l\u0430b.example", "sso.fail.bad_email"},
				{"fullwidth ａ", "\uff41dmin@lab.example", "sso.fail.unverified"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					c := env.Client()
					u := &mockoidc.MockUser{Subject: "x-" + tc.name, Email: tc.email, PreferredUsername: "Admin", EmailVerified: true}
					wantSSOFailure(t, env, c, ssoSignIn(t, c, p, u), http.StatusForbidden, tc.reason)
				})
			}
			if n, _ := env.DB.CountUsers(t.Context()); n != 1 {
				t.Errorf("users = %d, want 1 (no look-alike account)", n)
			}
			if u := mustUser(t, env, "admin@lab.example"); u.Subject != "" {
				t.Errorf("the admin's account was linked to %q", u.Subject)
			}
			// Scripts that do not mix stay welcome.
			c := env.Client()
			u := &mockoidc.MockUser{Subject: "zs", Email: "张三@例子.中国", PreferredUsername: "张三", EmailVerified: true}
			if res := ssoSignIn(t, c, p, u); res.Code != http.StatusSeeOther {
				t.Errorf("Han address: %d %s", res.Code, res.Body.String())
			}
		})
	}
}

// TestSSOUnixClaimRefusesSystemAccounts: a claim that names a system
// account (nobody, daemon, ROOT, root.) or breaks the nodes' NAME_REGEX
// sets no login (the person still signs in); the admin form refuses the
// same names. Names stored before the rule tightened still show, marked
// for the admin, and do not lock their owner out of signing in.
func TestSSOUnixClaimRefusesSystemAccounts(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			p := startIdP(t)
			env := ssoEnv(t, d, p, withUnixClaim)
			for i, uid := range []string{"nobody", "daemon", "ROOT", "root.", "systemd-network", "Anna", "_apt"} {
				c := env.Client()
				email := "s" + itoa(int64(i)) + "@lab.example"
				u := &uidUser{MockUser: &mockoidc.MockUser{Subject: "s-" + uid, Email: email,
					PreferredUsername: "S", EmailVerified: true, Groups: []string{}}, UID: uid}
				if res := ssoSignIn(t, c, p, u); res.Code != http.StatusSeeOther {
					t.Errorf("claim %q: %d, want a sign-in without the login", uid, res.Code)
					continue
				}
				got, _ := env.DB.UserByEmail(t.Context(), email)
				if got == nil || !got.UnixAssumed() {
					t.Errorf("claim %q set a login: %+v", uid, got)
				}
			}

			admin := ssoAdmin(t, env, p)
			bob := env.AddUser("bob@lab.example", "Bob", false)
			page := "/admin/users/" + itoa(bob.ID)
			admin.Get(page)
			for _, name := range []string{"nobody", "Daemon", "www-data", "root."} {
				if res := admin.Post(page+"/unix", url.Values{"unix": {name}}); res.Code != http.StatusUnprocessableEntity {
					t.Errorf("admin sets %q: %d, want 422", name, res.Code)
				}
			}

			// Stored before: a primary and an extra the rule now refuses.
			legacy := env.AddUser("legacy@lab.example", "Legacy", false)
			db := env.DB.Gorm
			if err := db.Exec("UPDATE users SET unix_name = 'Legacy', unix_source = 'sso' WHERE id = ?", legacy.ID).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Exec("INSERT INTO unix_names (name, user_id, is_primary) VALUES ('Legacy', ?, true), ('nobody', ?, false)", legacy.ID, legacy.ID).Error; err != nil {
				t.Fatal(err)
			}
			res := admin.Get("/admin/users/" + itoa(legacy.ID))
			if res.Code != http.StatusOK || res.Doc.Find(`[data-testid="unix-login"]`).Text() != "Legacy" {
				t.Errorf("legacy user page: %d, login %q", res.Code, res.Doc.Find(`[data-testid="unix-login"]`).Text())
			}
			if warn := res.Doc.Find(`[data-testid="unix-unsafe"]`); warn.Length() != 1 || !strings.Contains(warn.AttrOr("title", ""), "nobody") {
				t.Errorf("legacy user page warns %d times: %q", warn.Length(), warn.AttrOr("title", ""))
			}
			list := admin.Get("/admin/users")
			if list.Code != http.StatusOK || list.Doc.Find(`[data-testid="user-legacy@lab.example"] [data-testid="unix-unsafe"]`).Length() != 1 {
				t.Errorf("users list: %d, legacy row unmarked", list.Code)
			}
			c := env.Client()
			u := &uidUser{MockUser: &mockoidc.MockUser{Subject: "legacy", Email: "legacy@lab.example", PreferredUsername: "Legacy",
				EmailVerified: true, Groups: []string{}}, UID: "legacy2"}
			if res := ssoSignIn(t, c, p, u); res.Code != http.StatusSeeOther {
				t.Fatalf("legacy sign-in: %d %s", res.Code, res.Body.String())
			}
			x, err := env.DB.UnixIdentity(t.Context(), legacy.ID)
			if err != nil || x.Name != "legacy2" || len(x.Extra) != 1 || x.Extra[0] != "nobody" {
				t.Errorf("legacy after sign-in: %+v, %v; want legacy2, extra kept", x, err)
			}
			if prof := c.Get("/profile"); prof.Code != http.StatusOK {
				t.Errorf("legacy profile: %d", prof.Code)
			}
		})
	}
}

// TestSSOTeamNamesIgnoreCase: a group that names a team in another case
// joins the existing team rather than making a second one beside it, and
// an admin cannot make "VISION" beside "Vision" either.
func TestSSOTeamNamesIgnoreCase(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			p := startIdP(t)
			env := ssoEnv(t, d, p)
			admin := ssoAdmin(t, env, p)
			admin.Get("/admin/teams")
			if res := admin.Post("/admin/teams", url.Values{"name": {"Vision"}}); res.Code != http.StatusSeeOther {
				t.Fatalf("create Vision: %d", res.Code)
			}
			c := env.Client()
			u := &mockoidc.MockUser{Subject: "ln", Email: "li.na@lab.example", PreferredUsername: "Li Na", EmailVerified: true,
				Groups: []string{"gpu-team-vision", "gpu-team-VISION-leads"}}
			if res := ssoSignIn(t, c, p, u); res.Code != http.StatusSeeOther {
				t.Fatalf("sign-in: %d %s", res.Code, res.Body.String())
			}
			teams, err := env.DB.Teams(t.Context())
			if err != nil || len(teams) != 1 || teams[0].Name != "Vision" {
				t.Errorf("teams = %+v, %v; want only Vision", teams, err)
			}
			if roles := teamRoles(t, env, mustUser(t, env, "li.na@lab.example").ID); len(roles) != 1 || roles["Vision"] != "lead/idp" {
				t.Errorf("roles = %v, want Vision lead", roles)
			}
			admin.Get("/admin/teams")
			res := admin.Post("/admin/teams", url.Values{"name": {"VISION"}})
			if msg := res.Doc.Find(`[data-testid="error-name"]`).Text(); res.Code != http.StatusUnprocessableEntity || !strings.Contains(msg, "“Vision”") {
				t.Errorf("create VISION: %d %q, want 422 naming “Vision”", res.Code, msg)
			}
			if teams, _ := env.DB.Teams(t.Context()); len(teams) != 1 {
				t.Errorf("teams after VISION = %+v", teams)
			}
		})
	}
}

func mustUser(t *testing.T, env *webtest.Env, email string) *models.User {
	t.Helper()
	u, err := env.DB.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
