package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// uidUser is a mockoidc user whose ID token also carries a "uid" claim, as
// an LDAP-backed IdP (Keycloak, FreeIPA, Dex with LDAP) sends it.
type uidUser struct {
	*mockoidc.MockUser
	UID string
}

func (u *uidUser) Claims(scope []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	c, err := u.MockUser.Claims(scope, base)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	m := jwt.MapClaims{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["uid"] = u.UID
	return m, nil
}

// withUnixClaim names the uid claim as the Unix login (GPUBOOK_OIDC_UNIX_CLAIM=uid).
func withUnixClaim(c *web.Config) { c.SSO.UnixClaim = "uid" }

// agentNode enrols a node with n GPUs straight in the store and returns its
// ID and credential, for calls to the agent API.
func agentNode(t *testing.T, env *webtest.Env, name string, n int) (int64, string) {
	t.Helper()
	ctx := t.Context()
	gpus, err := models.NewNodeGPUs(name, n, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		t.Fatal(err)
	}
	node := &models.Node{Name: name}
	if err := env.DB.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	tok, _, err := env.DB.CreateEnrollToken(ctx, node.ID, time.Now(), models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := env.DB.Enroll(ctx, wire.EnrollRequest{Token: tok, Hostname: name, AgentVersion: "test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return node.ID, resp.Credential
}

// agentSchedule fetches GET /api/agent/v1/schedule as the node, through the
// wired router, and returns the raw body too (to look for e-mail addresses).
func agentSchedule(t *testing.T, env *webtest.Env, cred string) (wire.Schedule, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/api/agent/v1/schedule", nil)
	req.Header.Set("Authorization", "Bearer "+cred)
	res := env.Client().Do(req)
	if res.Code != http.StatusOK {
		t.Fatalf("schedule: %d %s", res.Code, res.Body.String())
	}
	var s wire.Schedule
	if err := json.Unmarshal(res.Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	return s, res.Body.String()
}

// TestSSOUnixClaimReachesSchedule: zhangsan@lab.edu.cn logs in to the GPU
// servers as zs2023, which the IdP sends as "uid". Signing in sets it, her
// profile shows it, and her booking reaches the agent under that login
// (never her email); when the directory renames her, the next sign-in
// moves the booking to the new login. Someone else whose IdP claims a
// login she owns is refused, with a page that says why.
func TestSSOUnixClaimReachesSchedule(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			p := startIdP(t)
			env := ssoEnv(t, d, p, withUnixClaim)
			zs := &uidUser{MockUser: &mockoidc.MockUser{Subject: "zs", Email: "zhangsan@lab.edu.cn", PreferredUsername: "Zhang San",
				EmailVerified: true, Groups: []string{}}, UID: "zs2023"}
			c := env.Client()
			if res := ssoSignIn(t, c, p, zs); res.Code != http.StatusSeeOther {
				t.Fatalf("sign-in: %d %s", res.Code, res.Body.String())
			}
			u, err := env.DB.UserByEmail(t.Context(), "zhangsan@lab.edu.cn")
			if err != nil || u.Unix != "zs2023" || u.UnixSource != models.UnixSourceSSO {
				t.Fatalf("user = %+v, %v", u, err)
			}
			prof := c.Get("/profile")
			if got := strings.TrimSpace(prof.Doc.Find(`[data-testid="unix-login"]`).Text()); got != "zs2023" {
				t.Errorf("profile login = %q, want zs2023", got)
			}
			if prof.Doc.Find(`[data-testid="unix-assumed"]`).Length() != 0 {
				t.Error("profile marks an IdP-set login as assumed")
			}

			nodeID, cred := agentNode(t, env, "gpu01", 2)
			node, _ := env.DB.Node(t.Context(), nodeID)
			start := time.Now().UTC().Truncate(30 * time.Minute).Add(30 * time.Minute)
			if _, err := env.DB.CreateBooking(t.Context(), models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID},
				StartsAt: start, EndsAt: start.Add(time.Hour)}, models.DefaultBookingLimits, time.Now(), models.CLIActor); err != nil {
				t.Fatal(err)
			}
			s, raw := agentSchedule(t, env, cred)
			if len(s.Bookings) != 1 || s.Bookings[0].User != "zs2023" {
				t.Fatalf("schedule bookings = %+v, want one for zs2023", s.Bookings)
			}
			if strings.Contains(raw, "@") {
				t.Errorf("schedule carries an e-mail address: %s", raw)
			}

			zs.UID = "zs2024"
			ssoSignIn(t, env.Client(), p, zs)
			if s, _ := agentSchedule(t, env, cred); len(s.Bookings) != 1 || s.Bookings[0].User != "zs2024" {
				t.Errorf("after the IdP renamed her: %+v, want zs2024", s.Bookings)
			}
			events, _ := env.DB.AuditEvents(t.Context(), models.AuditFilter{Action: models.AuditUserUnix})
			if len(events) != 2 {
				t.Errorf("unix audit events = %d, want 2 (set, renamed)", len(events))
			}

			other := &uidUser{MockUser: &mockoidc.MockUser{Subject: "ww", Email: "wang.wei@lab.edu.cn", PreferredUsername: "Wang Wei",
				EmailVerified: true, Groups: []string{}}, UID: "zs2024"}
			c2 := env.Client()
			res := ssoSignIn(t, c2, p, other)
			if got, _ := res.Doc.Find(`[data-testid="sso-failure"]`).Attr("data-reason"); res.Code != http.StatusConflict || got != "sso.fail.unix_taken" {
				t.Errorf("clashing claim: %d %q, want 409 sso.fail.unix_taken", res.Code, got)
			}
			if who := signedInAs(c2); who != "" {
				t.Errorf("a clashing claim signed in %q", who)
			}
		})
	}
}

// TestAdminSetsUnixLogin: the admin's user page sets a login with extra
// names (shown, with its source, on the page, the users list and the
// person's profile); a name another user owns is refused on the form with
// a message naming it, in both languages; an invalid name is refused.
func TestAdminSetsUnixLogin(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			admin := env.Client()
			admin.SignIn("root@example.org", "Root")
			sw := env.AddUser("s.wang@corp.com", "Wang Shu", false)
			bob := env.AddUser("bob@corp.com", "Bob", false)
			page := "/admin/users/" + itoa(sw.ID)
			if got := admin.Get(page).Doc.Find(`[data-testid="unix-assumed"]`).Length(); got != 1 {
				t.Errorf("assumed marks before = %d, want 1", got)
			}
			admin.Get(page)
			res := admin.Post(page+"/unix", url.Values{"unix": {"wangs"}, "unix_extra": {"wangs_old, shared-gpu"}})
			if res.Code != http.StatusSeeOther {
				t.Fatalf("save: %d %s", res.Code, res.Body.String())
			}
			doc := admin.Get(page).Doc
			if got := doc.Find(`[data-testid="unix-login"]`).Text(); got != "wangs" || doc.Find(`[data-testid="unix-assumed"]`).Length() != 0 {
				t.Errorf("page login = %q (assumed %d)", got, doc.Find(`[data-testid="unix-assumed"]`).Length())
			}
			if got := doc.Find(`[data-testid="unix-extra"]`).Text(); !strings.Contains(got, "shared-gpu, wangs_old") {
				t.Errorf("extra = %q", got)
			}
			row := admin.Get("/admin/users").Doc.Find(`[data-testid="user-s.wang@corp.com"] [data-testid="unix-login"]`).Text()
			if row != "wangs" {
				t.Errorf("users list login = %q", row)
			}

			bobPage := "/admin/users/" + itoa(bob.ID)
			admin.Get(bobPage)
			for _, tc := range []struct{ lang, unix, extra, want string }{
				{"en", "wangs_old", "", `"wangs_old" already belongs to another gpubook user`},
				{"zh-CN", "bob", "shared-gpu", "“shared-gpu”已属于另一位 gpubook 用户"},
			} {
				admin.Header.Set("Accept-Language", tc.lang)
				res := admin.Post(bobPage+"/unix", url.Values{"unix": {tc.unix}, "unix_extra": {tc.extra}})
				if res.Code != http.StatusConflict || !strings.Contains(res.Doc.Find(`[data-testid="unix-form"]`).Text(), tc.want) {
					t.Errorf("%s clash: %d, form %q; want 409 with %q", tc.lang, res.Code, res.Doc.Find(`[data-testid="unix-form"]`).Text(), tc.want)
				}
			}
			admin.Header.Set("Accept-Language", "en")
			if res := admin.Post(bobPage+"/unix", url.Values{"unix": {"bob smith"}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("invalid name: %d, want 422", res.Code)
			}
			if u, _ := env.DB.User(t.Context(), bob.ID); !u.UnixAssumed() {
				t.Errorf("a refused change was saved: %+v", u)
			}

			me := env.Client()
			me.SignIn("s.wang@corp.com", "Wang Shu")
			if got := me.Get("/profile").Doc.Find(`[data-testid="unix-login"]`).Text(); got != "wangs" {
				t.Errorf("profile login = %q", got)
			}
		})
	}
}

// TestUnknownAndContainerOwners: a violation by a login that maps to no
// gpubook user is shown as "unknown user NAME (uid N)", one by a process in
// a container as "in a container ID" (the id the agent read from the
// process's cgroup), and one under a user's extra name is charged to them
// and listed among their own violations.
func TestUnknownAndContainerOwners(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			admin := env.Client()
			admin.SignIn("root@example.org", "Root")
			zs := env.AddUser("zhangsan@lab.edu.cn", "Zhang San", false)
			if err := env.DB.SetUnixLogin(t.Context(), zs.ID, models.UnixIdentity{Name: "zs2023", Extra: []string{"zsold"}, Source: models.UnixSourceAdmin}, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			nodeID, cred := agentNode(t, env, "gpu01", 1)
			uuid := "GPU-00000001-0000-4000-8000-000000000000"
			inv := wire.Inventory{Node: "gpu01", AgentVersion: "test", ReportedAt: time.Now().UTC(),
				GPUs: []wire.GPU{{UUID: uuid, Index: 0, Minor: 0, Model: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920}}}
			if _, err := env.DB.ApplyInventory(t.Context(), nodeID, inv, time.Now()); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC().Truncate(time.Second)
			cid := strings.Repeat("4f2a9c1b", 8)
			viol := func(id, user string, uid int, container string) wire.Violation {
				return wire.Violation{ID: id, Kind: wire.ViolationUnbooked, GPUUUID: uuid, User: user, UID: uid, PID: 100 + uid,
					MemoryMiB: 1000, FirstSeen: now, LastSeen: now, Action: wire.ActionWarned, Container: container}
			}
			b := wire.ViolationBatch{Node: "gpu01", BatchID: "v1", Violations: []wire.Violation{
				viol("a", "ghost", 4242, ""), viol("b", "root", 0, cid), viol("c", "zsold", 7001, "")}}
			body, _ := json.Marshal(b)
			req := httptest.NewRequest(http.MethodPost, "/api/agent/v1/violations", strings.NewReader(string(body)))
			req.Header.Set("Authorization", "Bearer "+cred)
			req.Header.Set("Content-Type", "application/json")
			if res := env.Client().Do(req); res.Code >= 300 {
				t.Fatalf("violations: %d %s", res.Code, res.Body.String())
			}
			doc := admin.Get("/admin/violations").Doc
			if got := doc.Find(`[data-testid="owner-unknown"]`).Text(); got != "unknown user ghost (uid 4242)" {
				t.Errorf("unknown owner = %q", got)
			}
			if got := doc.Find(`[data-testid="owner-container"]`).Text(); got != "in a container 4f2a9c1b4f2a" {
				t.Errorf("container owner = %q", got)
			}
			me := env.Client()
			me.SignIn("zhangsan@lab.edu.cn", "Zhang San")
			mine := me.Get("/violations/mine").Doc.Find(`[data-testid="violation-user"]`)
			if mine.Length() != 1 || strings.TrimSpace(mine.Text()) != "Zhang San (zsold)" {
				t.Errorf("her violations: %d %q, want the one under zsold", mine.Length(), mine.Text())
			}
		})
	}
}
