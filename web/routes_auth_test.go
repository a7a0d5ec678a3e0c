package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// Who may use a route. Every registered route must appear in routeRoles:
// a new route without a rule fails this test.
const (
	public = "public" // anyone, signed in or not
	user   = "user"   // any signed-in user (pages: session cookie)
	admin  = "admin"  // admins only
	token  = "token"  // JSON API: a personal token, never the cookie
	node   = "node"   // agent API: a node credential
	enrol  = "enrol"  // agent enrolment: a one-time token in the body
	feed   = "feed"   // calendar feed: a feed token in the path, never the cookie
)

var routeRoles = map[string]string{
	"GET /":                                      public,
	"GET /healthz":                               public,
	"GET /readyz":                                public,
	"GET /static/*":                              public,
	"GET /favicon.ico":                           public,
	"POST /lang":                                 public,
	"GET /login":                                 public,
	"POST /login/dev":                            public,
	"POST /logout":                               public,
	"GET /calendar":                              user,
	"GET /bookings":                              user,
	"GET /bookings/new":                          user,
	"POST /bookings":                             user,
	"POST /bookings/:id/cancel":                  user,
	"POST /bookings/:id/extend":                  user,
	"POST /bookings/:id/note":                    user,
	"POST /bookings/:id/release":                 user,
	"GET /slots":                                 user,
	"GET /gpus/:id":                              user,
	"GET /notifications":                         user,
	"GET /notifications/count":                   user,
	"POST /notifications/read-all":               user,
	"POST /notifications/:id/read":               user,
	"POST /bookings/check":                       user,
	"POST /bookings/gpus":                        user,
	"POST /bookings/now":                         user,
	"POST /profile/zone":                         user,
	"GET /limits":                                user,
	"GET /limits/ledger":                         user,
	"POST /limits/lend":                          user,
	"GET /requests/new":                          user,
	"POST /requests":                             user,
	"GET /requests/:id":                          user,
	"POST /requests/:id/approve":                 user,
	"POST /requests/:id/deny":                    user,
	"POST /requests/:id/withdraw":                user,
	"GET /approvals":                             user,
	"POST /watches":                              user,
	"POST /profile/reminders":                    user,
	"GET /admin/policies":                        admin,
	"POST /admin/policies/limits":                admin,
	"POST /admin/policies/settings":              admin,
	"POST /admin/policies/models":                admin,
	"GET /usage":                                 user,
	"GET /usage/definitions":                     user,
	"POST /profile/report-email":                 user,
	"GET /usage/team/:id":                        admin, // and the team's leads: web/report_pages_test.go
	"GET /admin/usage":                           admin,
	"POST /admin/usage/recompute":                admin,
	"POST /admin/usage/unix-map":                 admin,
	"GET /admin/import":                          admin,
	"POST /admin/import":                         admin,
	"GET /status":                                user,
	"GET /violations/mine":                       user,
	"GET /profile":                               user,
	"POST /profile":                              user,
	"POST /profile/tokens":                       user,
	"POST /profile/tokens/:id/revoke":            user,
	"POST /profile/feeds":                        user,
	"POST /profile/feeds/:id/revoke":             user,
	"GET /feeds/:file":                           feed,
	"GET /admin":                                 admin,
	"GET /admin/agents":                          admin,
	"GET /admin/audit":                           admin,
	"GET /admin/groups":                          admin,
	"POST /admin/groups":                         admin,
	"POST /admin/groups/:id/remove":              admin,
	"GET /admin/nodes":                           admin,
	"POST /admin/nodes":                          admin,
	"GET /admin/nodes/:id/enroll":                admin,
	"POST /admin/nodes/:id/enroll":               admin,
	"POST /admin/nodes/:id/rename":               admin,
	"POST /admin/gpus/:id/service":               admin,
	"GET /admin/teams":                           admin,
	"POST /admin/teams":                          admin,
	"GET /admin/teams/:id":                       admin,
	"POST /admin/teams/:id/members":              admin,
	"POST /admin/teams/:id/share-weight":         admin,
	"POST /admin/teams/:id/whole-bookings":       admin,
	"POST /admin/teams/:id/members/:user/remove": admin,
	"GET /admin/users":                           admin,
	"POST /admin/users/:id/admin":                admin,
	"GET /admin/users/:id":                       admin,
	"POST /admin/users/:id/unix":                 admin,
	"POST /admin/users/:id/disable":              admin,
	"POST /admin/users/:id/enable":               admin,
	"POST /admin/users/:id/rename":               admin,
	"POST /admin/mail/:id/requeue":               admin,
	"GET /admin/violations":                      admin,
	"GET /api/v1/me":                             token,
	"GET /api/v1/gpus":                           token,
	"GET /api/v1/bookings":                       token,
	"POST /api/v1/bookings":                      token,
	"DELETE /api/v1/bookings/:id":                token,
	"POST /api/v1/bookings/:id/extend":           token,
	"POST /api/v1/bookings/:id/release":          token,
	"GET /api/v1/slots":                          token,
	"POST /api/v1/requests":                      token,
	"GET /api/v1/requests/:id":                   token,
	"GET /api/v1/limits":                         token,
	"GET /api/v1/openapi.json":                   public,
	"POST /api/agent/v1/enroll":                  enrol,
	"PUT /api/agent/v1/inventory":                node,
	"GET /api/agent/v1/schedule":                 node,
	"POST /api/agent/v1/usage":                   node,
	"POST /api/agent/v1/violations":              node,
	"POST /api/agent/v1/idle":                    node,
	"POST /api/agent/v1/heartbeat":               node,
}

// TestEveryRouteDeclaresWhoMayUseIt walks e.Routes() and checks each one
// against the table, as anonymous, as a plain user, as an admin, with the
// session cookie on the API and with a user's token on the agent API.
func TestEveryRouteDeclaresWhoMayUseIt(t *testing.T) {
	t.Parallel()
	// Every 401 below comes from one address: a failure budget that holds
	// them all, so that the access rules are what is tested here.
	env := webtest.New(t, "sqlite", func(c *web.Config) {
		c.APIFailRate = web.Rate{PerMinute: 6000, Burst: 1000}
		c.SignInRate = web.Rate{PerMinute: 6000, Burst: 1000} // anonymous writes are limited at 3 × this
	})
	adminC := env.Client()
	adminC.SignIn("root@example.org", "Root") // first user: admin
	userC := env.Client()
	userC.SignIn("user@example.org", "User")
	adminC.Get("/")
	userC.Get("/")
	u, _ := env.DB.UserByEmail(t.Context(), "user@example.org")
	seen := map[string]bool{}
	for _, r := range env.Server.Echo.Routes() {
		if strings.HasPrefix(r.Method, "echo_route") || r.Method == "RouteNotFound" {
			continue
		}
		key := r.Method + " " + r.Path
		seen[key] = true
		role, ok := routeRoles[key]
		if !ok {
			t.Errorf("%s has no entry in routeRoles: declare who may use it", key)
			continue
		}
		t.Run(key, func(t *testing.T) {
			// A fresh token each time: a route under test may revoke token 1.
			_, plain, err := env.DB.CreateToken(t.Context(), u.ID, "t", time.Now(), models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			path := concretePath(r.Path)
			anon := env.Client()
			anon.Get("/") // a CSRF token, so that POSTs reach the access check
			switch role {
			case public:
				expectAllowed(t, "anonymous", do(anon, r.Method, path, ""))
			case user:
				expectSignInRedirect(t, do(anon, r.Method, path, ""))
				expectAllowed(t, "user", do(userC, r.Method, path, ""))
			case admin:
				expectSignInRedirect(t, do(anon, r.Method, path, ""))
				expectStatus(t, "user", do(userC, r.Method, path, ""), http.StatusForbidden)
				expectAllowed(t, "admin", do(adminC, r.Method, path, ""))
			case token:
				expectStatus(t, "anonymous", do(anon, r.Method, path, ""), http.StatusUnauthorized)
				expectStatus(t, "session cookie only", do(userC, r.Method, path, ""), http.StatusUnauthorized)
				expectAllowed(t, "token", do(anon, r.Method, path, plain))
			case node:
				expectStatus(t, "anonymous", do(anon, r.Method, path, ""), http.StatusUnauthorized)
				expectStatus(t, "a user's API token", do(anon, r.Method, path, plain), http.StatusUnauthorized)
			case feed:
				expectStatus(t, "anonymous", do(anon, r.Method, path, ""), http.StatusNotFound)
				expectStatus(t, "session cookie only", do(userC, r.Method, path, ""), http.StatusNotFound)
				expectStatus(t, "a user's API token", do(anon, r.Method, path, plain), http.StatusNotFound)
			case enrol:
				expectStatus(t, "a bad enrolment token", do(anon, r.Method, path, ""), http.StatusUnauthorized)
			default:
				t.Fatalf("unknown role %q", role)
			}
		})
	}
	for key := range routeRoles {
		if !seen[key] {
			t.Errorf("routeRoles lists %s, which is not registered", key)
		}
	}
}

// concretePath fills path parameters with an id that exists or not; access
// control must answer before the handler looks the id up.
func concretePath(p string) string {
	p = strings.ReplaceAll(p, "*", "css/app.css")
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "1"
		}
	}
	return strings.Join(parts, "/")
}

func do(c *webtest.Client, method, path, bearer string) *webtest.Response {
	var req *http.Request
	if method == http.MethodGet || method == http.MethodDelete && bearer != "" {
		req = httptest.NewRequest(method, path, nil)
	} else {
		form := url.Values{"_csrf": {c.CSRF}}
		req = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if strings.HasPrefix(path, "/api/") {
			req = httptest.NewRequest(method, path, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return c.Do(req)
}

func expectAllowed(t *testing.T, who string, res *webtest.Response) {
	t.Helper()
	if res.Code == http.StatusUnauthorized || res.Code == http.StatusForbidden || res.Code >= 500 ||
		res.Code == http.StatusSeeOther && strings.HasPrefix(res.Header().Get("Location"), "/login") {
		t.Errorf("%s: status %d (Location %q), want access", who, res.Code, res.Header().Get("Location"))
	}
}

func expectSignInRedirect(t *testing.T, res *webtest.Response) {
	t.Helper()
	if res.Code != http.StatusSeeOther || !strings.HasPrefix(res.Header().Get("Location"), "/login") {
		t.Errorf("anonymous: status %d (Location %q), want a redirect to sign in", res.Code, res.Header().Get("Location"))
	}
}

func expectStatus(t *testing.T, who string, res *webtest.Response, want int) {
	t.Helper()
	if res.Code != want {
		t.Errorf("%s: status %d, want %d", who, res.Code, want)
	}
}

// TestIDSwapping tries other people's ids: a user may read everyone's
// bookings on the calendar but change only their own, through pages and API.
func TestIDSwapping(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite")
	owner := env.AddUser("owner@example.org", "Owner", false)
	thief := env.Client()
	thief.SignIn("thief@example.org", "Thief")
	thief.Get("/bookings")
	gpus, err := models.NewNodeGPUs("gpu01", 2, "NVIDIA L40S", 46068)
	if err != nil {
		t.Fatal(err)
	}
	n := &models.Node{Name: "gpu01"}
	if err := env.DB.CreateNode(t.Context(), n, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	upcoming, err := env.DB.CreateBooking(t.Context(), models.NewBooking{UserID: owner.ID, GPUIDs: []int64{n.GPUs[0].ID},
		StartsAt: now.Add(2 * time.Hour), EndsAt: now.Add(3 * time.Hour), Note: "mine"}, models.DefaultBookingLimits, now, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	active, err := env.DB.CreateBooking(t.Context(), models.NewBooking{UserID: owner.ID, GPUIDs: []int64{n.GPUs[1].ID},
		StartsAt: now, EndsAt: now.Add(3 * time.Hour)}, models.DefaultBookingLimits, now, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	id := func(b *models.Booking) string { return itoa(b.ID) }
	pages := []struct{ path string }{
		{"/bookings/" + id(upcoming) + "/cancel"},
		{"/bookings/" + id(active) + "/release"},
		{"/bookings/" + id(upcoming) + "/extend"},
		{"/bookings/" + id(upcoming) + "/note"},
	}
	for _, p := range pages {
		res := thief.Post(p.path, url.Values{"ends_at": {now.Add(5 * time.Hour).Format("2006-01-02T15:04")}, "note": {"stolen"}})
		if res.Code != http.StatusForbidden {
			t.Errorf("POST %s by another user: %d, want 403", p.path, res.Code)
		}
	}
	thiefUser, _ := env.DB.UserByEmail(t.Context(), "thief@example.org")
	_, plain, _ := env.DB.CreateToken(t.Context(), thiefUser.ID, "t", now, models.CLIActor)
	for _, call := range []struct{ method, path, body string }{
		{http.MethodDelete, "/api/v1/bookings/" + id(upcoming), ""},
		{http.MethodPost, "/api/v1/bookings/" + id(active) + "/release", ""},
		{http.MethodPost, "/api/v1/bookings/" + id(upcoming) + "/extend", `{"ends_at":"` + now.Add(5*time.Hour).UTC().Format(time.RFC3339) + `"}`},
	} {
		req := httptest.NewRequest(call.method, call.path, strings.NewReader(call.body))
		req.Header.Set("Authorization", "Bearer "+plain)
		req.Header.Set("Content-Type", "application/json")
		if res := env.Client().Do(req); res.Code != http.StatusForbidden {
			t.Errorf("%s %s with another user's token: %d, want 403", call.method, call.path, res.Code)
		}
	}
	for _, b := range []*models.Booking{upcoming, active} {
		got, _ := env.DB.Booking(t.Context(), b.ID)
		if got.Status != b.Status || !got.EndsAt.Equal(b.EndsAt) || got.Note != b.Note {
			t.Errorf("booking %d changed by another user: %+v", b.ID, got)
		}
	}
}
