package web_test

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// badText are values no text field may store: PostgreSQL answered NUL with
// a 500 while SQLite stored it, and control characters break pages, CSV
// cells and mail headers. Multi-line fields keep LF; one-line fields refuse
// it too (see badLine).
var badText = map[string]string{
	"NUL":           "a\x00b",
	"escape":        "a\x1b[31mb",
	"invalid UTF-8": "a\xff\xfeb",
	"300 kB":        strings.Repeat("x", 300<<10),
}

var badLine = map[string]string{"CR LF": "a\r\nb", "LF": "a\nb", "tab": "a\tb"}

// badNumber are values no number field may take.
var badNumber = map[string]string{
	"huge":     "99999999999999999999999999",
	"int64+1":  "9223372036854775808",
	"negative": "-5",
	"float":    "1e309",
	"NaN":      "NaN",
	"word":     "twelve",
	"NUL":      "1\x00",
}

// formRoute is one browser POST route: a form that works, and which of its
// fields are text (one line or several) and which are numbers.
type formRoute struct {
	path              string
	admin, anon       bool
	good              url.Values
	line, multi, nums []string
	// preview routes answer a check with 200 and the problems in the page;
	// they store nothing, so they need no 4xx.
	preview bool
}

func badInputRoutes(f *apiFixture, bookingID int64, teamID int64) []formRoute {
	g := itoa(f.gpus[0].ID)
	b := itoa(bookingID)
	booking := url.Values{"gpu": {g}, "starts_at": {hoursAfter(30).Format("2006-01-02T15:04")}, "duration": {"1"}, "note": {"ok"}}
	request := url.Values{"gpu": {g}, "starts_at": {hoursAfter(30).Format("2006-01-02T15:04")}, "duration": {"1"},
		"purpose": {"p"}, "urgency": {"u"}, "plan": {"p"}, "give_back": {"g"}}
	limits := url.Values{"scope": {"global"}}
	var limitKeys []string
	for _, s := range models.PolicyRules {
		for _, per := range s.Periods {
			limitKeys = append(limitKeys, models.Key(s.Rule, per))
		}
	}
	return []formRoute{
		{path: "/login/dev", anon: true, good: url.Values{"email": {"new@example.org"}, "name": {"New"}}, line: []string{"email", "name"}},
		{path: "/logout", anon: true, good: url.Values{}},
		{path: "/profile", good: url.Values{"language": {"en"}, "time_zone": {"UTC"}}, line: []string{"language", "time_zone"}},
		{path: "/profile/tokens", good: url.Values{"name": {"laptop"}}, line: []string{"name"}},
		{path: "/profile/tokens/99/revoke", good: url.Values{}},
		{path: "/profile/reminders", good: url.Values{"notify_reminders": {"on"}}},
		{path: "/profile/report-email", good: url.Values{"report_email": {"on"}}},
		{path: "/bookings", good: booking, line: []string{"starts_at", "duration"}, multi: []string{"note"}, nums: []string{"gpu", "duration"}},
		{path: "/bookings/check", preview: true, good: booking, line: []string{"starts_at"}, nums: []string{"gpu", "duration"}},
		{path: "/bookings/" + b + "/note", good: url.Values{"note": {"ok"}}, multi: []string{"note"}},
		{path: "/bookings/" + b + "/extend", good: url.Values{"ends_at": {hoursAfter(4).Format("2006-01-02T15:04")}}, line: []string{"ends_at"}},
		{path: "/bookings/99999999999999999999/cancel", good: url.Values{}},
		{path: "/bookings/-1/release", good: url.Values{}},
		{path: "/limits/lend", good: url.Values{"action": {"lend"}, "to": {itoa(f.bob.ID)}, "hours": {"1"}, "note": {"n"}},
			line: []string{"note", "action"}, nums: []string{"to", "hours", "team"}},
		{path: "/requests", good: request, multi: []string{"purpose", "urgency", "plan", "give_back", "note"}, nums: []string{"gpu", "duration", "team_id"}},
		{path: "/requests/99/approve", good: url.Values{"comment": {"ok"}, "plan": {"0123456789abcdef01234567"}}, line: []string{"plan"}, multi: []string{"comment"}},
		{path: "/requests/99/withdraw", good: url.Values{}},
		{path: "/requests/99/deny", good: url.Values{"comment": {"ok"}}, multi: []string{"comment"}},
		{path: "/watches", good: booking, nums: []string{"gpu", "duration"}},
		{path: "/admin/nodes", admin: true, good: url.Values{"name": {"n9"}, "gpus": {"2"}, "model": {"A100"}, "memory_mib": {"81920"}},
			line: []string{"name", "model"}, nums: []string{"gpus", "memory_mib"}},
		{path: "/admin/nodes/" + itoa(f.gpus[0].NodeID) + "/rename", admin: true, good: url.Values{"name": {"gpu09"}}, line: []string{"name"}},
		{path: "/admin/gpus/" + g + "/service", admin: true, good: url.Values{"in_service": {"false"}, "reason": {"broken fan"}}, line: []string{"reason", "in_service"}},
		{path: "/admin/users/" + itoa(f.bob.ID) + "/admin", admin: true, good: url.Values{"admin": {"true"}}, line: []string{"admin"}},
		{path: "/admin/teams", admin: true, good: url.Values{"name": {"T2"}}, line: []string{"name"}},
		{path: "/admin/teams/" + itoa(teamID) + "/members", admin: true, good: url.Values{"user_id": {itoa(f.bob.ID)}, "role": {"member"}},
			line: []string{"role"}, nums: []string{"user_id"}},
		{path: "/admin/teams/" + itoa(teamID) + "/members/99999999999999999999/remove", admin: true, good: url.Values{}},
		{path: "/admin/groups", admin: true, good: url.Values{"group": {"g1"}, "team_id": {itoa(teamID)}, "role": {"member"}},
			line: []string{"group", "role"}, nums: []string{"team_id"}},
		{path: "/admin/groups/99999999999999999999/remove", admin: true, good: url.Values{}},
		{path: "/admin/policies/limits", admin: true, good: limits, line: append([]string{"scope"}, limitKeys...), nums: limitKeys},
		{path: "/admin/policies/settings", admin: true, good: url.Values{"peak_enabled": {"on"}, "peak_from": {"09:00"}, "peak_to": {"18:00"}, "peak_day": {"1"}},
			line: []string{"peak_from", "peak_to"}, nums: []string{"peak_day"}},
		{path: "/admin/policies/models", admin: true, good: url.Values{"model": {"A100"}, "team": {itoa(teamID)}}, line: []string{"model"}, nums: []string{"team"}},
		{path: "/admin/nodes/" + itoa(f.gpus[0].NodeID) + "/enroll", admin: true, good: url.Values{}},
	}
}

// TestBadFormInput sends every browser POST route (outside the agent API)
// NUL and control characters, invalid UTF-8, over-long text and numbers
// that are huge, negative, not finite or not numbers. None may answer 500;
// every bad text or number is a 4xx that stores nothing.
func TestBadFormInput(t *testing.T) {
	t.Parallel() // its own fixtures; hundreds of requests
	for _, d := range storetest.Dialects {
		// The routes in badFormGroups groups side by side, each on a fixture
		// of its own: one fixture took 19 s on PostgreSQL.
		for g := range badFormGroups {
			t.Run(fmt.Sprintf("%s/%d", d, g), func(t *testing.T) {
				t.Parallel()
				badFormInput(t, d, g)
			})
		}
	}
}

const badFormGroups = 3

// badFormInput runs the routes i, i+badFormGroups, … of badInputRoutes.
func badFormInput(t *testing.T, d string, group int) {
	// Sign-in rate limits high enough that every form reaches its handler.
	f := newAPIFixture(t, d, func(c *web.Config) { c.SignInRate = web.Rate{PerMinute: 1e6, Burst: 1e6} })
	var bk bookingBody
	res := f.adaAPI.Post("/api/v1/bookings", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"}`, f.gpus[0].ID, at(1), at(3)))
	res.Decode(&bk)
	team := &models.Team{Name: "T"}
	must(t, f.env.DB.CreateTeam(t.Context(), team, models.CLIActor))
	ada, root := f.env.Client(), f.env.Client()
	ada.SignIn("ada@example.org", "Ada")
	root.SignIn("root@example.org", "Root")
	snap := &snapshots{env: f.env}
	for i, r := range badInputRoutes(f, bk.ID, team.ID) {
		if i%badFormGroups != group {
			continue
		}
		c := ada
		switch {
		case r.admin:
			c = root
		case r.anon:
			c = f.env.Client()
		}
		t.Run(r.path, func(t *testing.T) {
			for _, field := range r.line {
				for name, v := range merge(badText, badLine) {
					postBad(t, snap, c, r, field, name, v, !r.preview)
				}
			}
			for _, field := range r.multi {
				for name, v := range badText {
					postBad(t, snap, c, r, field, name, v, !r.preview)
				}
			}
			for _, field := range r.nums {
				for name, v := range badNumber {
					postBad(t, snap, c, r, field, name, v, !r.preview)
				}
			}
			// Fields the route does not know, and a form that is not one.
			postBad(t, snap, c, r, "zzz\x00", "unknown field", "\x00", false)
		})
	}
}

// snapshots takes snapshot of one env, and keeps the last one taken after
// a request as the next request's "before": nothing else writes between
// the two (one test's requests, one after the other), and reading every
// table twice per request was most of this test's time.
type snapshots struct {
	env  *webtest.Env
	last string // "" when unknown
}

func (s *snapshots) before(t *testing.T) string {
	if s.last == "" {
		s.last = snapshot(t, s.env)
	}
	return s.last
}

func (s *snapshots) after(t *testing.T) string {
	s.last = snapshot(t, s.env)
	return s.last
}

// postBad posts r's good form with field set to v. Always: no 5xx. When
// must4xx: a 4xx error page and no stored change.
func postBad(t *testing.T, snap *snapshots, c *webtest.Client, r formRoute, field, name, v string, must4xx bool) {
	t.Helper()
	form := url.Values{}
	for k, vs := range r.good {
		form[k] = append([]string(nil), vs...)
	}
	form.Set(field, v)
	before := snap.before(t)
	// A fresh CSRF token (a good form may have signed in or out): the 404
	// page carries it as every page does, without the home page's work.
	c.Get("/no-such-page")
	res := c.Post(r.path, form)
	snap.last = "" // the request may have changed the database; after says what it holds
	switch {
	case res.Code >= 500:
		t.Errorf("%s=%s: %d", field, name, res.Code)
	case r.preview:
		if after := snap.after(t); after != before {
			t.Errorf("%s=%s: a check changed the database", field, name)
		}
	case !must4xx:
	case res.Code < 400:
		t.Errorf("%s=%s: %d, want a 4xx (Location %q)", field, name, res.Code, res.Header().Get("Location"))
	case res.Doc == nil:
		t.Errorf("%s=%s: %d without an HTML page", field, name, res.Code)
	default:
		if after := snap.after(t); after != before {
			t.Errorf("%s=%s: %d but the database changed", field, name, res.Code)
		}
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// snapshot is every row of every table that a request could change,
// except the session store (a request always touches its session).
func snapshot(t *testing.T, env *webtest.Env) string {
	t.Helper()
	tables, err := env.DB.Gorm.Migrator().GetTables()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(tables)
	var b strings.Builder
	for _, tb := range tables {
		if tb == "sessions" || strings.HasPrefix(tb, "goose") || strings.HasPrefix(tb, "sqlite_") {
			continue
		}
		var rows []map[string]any
		if err := env.DB.Gorm.Table(tb).Find(&rows).Error; err != nil {
			t.Fatalf("%s: %v", tb, err)
		}
		fmt.Fprintf(&b, "%s %d %v\n", tb, len(rows), rows)
	}
	return b.String()
}
