package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// The page sweep (issue 41): every page of the demo, as a researcher, a
// team lead and the admin, in English and in Chinese, through the wired
// router. It fails on a number with more than two decimals or a fraction
// without its unit, on a time of day not today without its date, and on
// English on a Chinese page. The server renders the same HTML at every
// width (no page reads the window's size), so the router sees what a
// 1280 px and a 390 px browser get; the Chromium sweep in web checks the
// layout at both widths.
func TestPageSweep(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	mustGpubook(t, url, "demo", "--usage-days", "1")
	db := storetest.OpenURL(t, url)
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	// A weekly limit of 100 GPU-hours and a minute, so that home and
	// limits show figures that are no round number of hours.
	weekly := []models.PolicyLimit{{Scope: models.ScopeGlobal, Rule: models.RuleMaxGPUHours, Period: models.PeriodAll, Value: 6001}}
	if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, weekly, time.Now(), models.CLIActor); err != nil {
		t.Fatal(err)
	}
	env := webtest.NewOn(t, db, func(c *web.Config) { c.Location = shanghai })
	data := demoWords(t, db)
	pages := sweepPages(t, db)
	for _, lang := range []string{"en", "zh-CN"} {
		for _, who := range []string{"marco.rossi@example.org", "sarah.johnson@example.org", "admin@example.org"} {
			u, err := db.UserByEmail(ctx, who)
			if err != nil {
				t.Fatal(err)
			}
			u.Language = lang
			if err := db.UpdateUser(ctx, u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			c := env.Client()
			c.SignIn(who, "")
			for _, pg := range pages[roleOf(u)] {
				res := c.Get(pg)
				if res.Code != http.StatusOK || res.Doc == nil {
					t.Errorf("%s %s %s: status %d", lang, who, pg, res.Code)
					continue
				}
				res.Doc.Find("script, style, code, pre, textarea").Remove()
				where := lang + " " + who + " " + pg
				for _, p := range sweepProblems(res.Doc, lang, append(data, pageData[pg]...)) {
					t.Errorf("%s: %s", where, p)
				}
			}
		}
	}
}

func roleOf(u *models.User) string {
	switch {
	case u.IsAdmin:
		return "admin"
	case u.Email == "sarah.johnson@example.org":
		return "lead"
	}
	return "researcher"
}

// pageData are words a page shows literally: the import's column names
// and the date formats and tools it names.
var pageData = map[string][]string{
	"/admin/import": {"TensorHive", "LibreBooking", "RFC", "YYYY", "MM", "DD", "HH", "MB", "user", "node", "gpus", "start", "end", "note"},
}

// sweepPages are the pages each role sees, with ids from the demo.
func sweepPages(t *testing.T, db *store.DB) map[string][]string {
	t.Helper()
	teams, err := db.Teams(ctx)
	if err != nil || len(teams) == 0 {
		t.Fatalf("teams: %v", err)
	}
	gpus, err := db.GPUs(ctx)
	if err != nil || len(gpus) == 0 {
		t.Fatalf("GPUs: %v", err)
	}
	nodes, err := db.Nodes(ctx)
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes: %v", err)
	}
	marco, err := db.UserByEmail(ctx, "marco.rossi@example.org")
	if err != nil {
		t.Fatal(err)
	}
	everyone := []string{"/", "/bookings", "/bookings/new", "/bookings/new?node=" + id(nodes[0].ID), "/calendar", "/calendar?view=day",
		"/calendar?view=day&date=" + time.Now().AddDate(0, 0, -1).Format("2006-01-02"), "/limits", "/limits/ledger",
		"/usage", "/usage/definitions", "/requests/new", "/profile", "/status", "/violations/mine", "/notifications",
		"/gpus/" + id(gpus[0].ID)}
	lead := append(append([]string{}, everyone...), "/approvals", "/usage/team/"+id(teams[0].ID))
	admin := append(append([]string{}, lead...), "/admin", "/admin/nodes", "/admin/users", "/admin/users/"+id(marco.ID),
		"/admin/teams", "/admin/teams/"+id(teams[0].ID), "/admin/groups", "/admin/audit", "/admin/policies", "/admin/agents",
		"/admin/violations", "/admin/usage", "/admin/import")
	return map[string][]string{"researcher": everyone, "lead": lead, "admin": admin}
}

func id(n int64) string { return fmt.Sprint(n) }

// demoWords are the demo's own names and notes: data, not interface text,
// and allowed on a Chinese page in whatever language they were written.
func demoWords(t *testing.T, db *store.DB) []string {
	t.Helper()
	var out []string
	users, err := db.Users(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		out = append(out, u.Name, u.Email, strings.Split(u.Email, "@")[0], initials(u.Name))
	}
	teams, _ := db.Teams(ctx)
	for _, tm := range teams {
		out = append(out, tm.Name)
	}
	gpus, _ := db.GPUs(ctx)
	for _, g := range gpus {
		out = append(out, g.Model, g.UUID)
	}
	nodes, _ := db.Nodes(ctx)
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	for _, b := range demoPlan(1, time.Now(), time.UTC).Bookings {
		out = append(out, b.Note)
	}
	for _, notes := range demoNotes() {
		out = append(out, notes...)
	}
	out = append(out, "Fan failure; RMA opened with the vendor (ticket #4711)")
	return out
}

// initials are a name's on a narrow calendar bar: "Marco Rossi" → "MR".
func initials(name string) string {
	var b strings.Builder
	for _, w := range strings.Fields(name) {
		b.WriteString(strings.ToUpper(string([]rune(w)[:1])))
	}
	return b.String()
}

// sweepProblems reads each text node of doc's body apart and says what
// is wrong with it.
func sweepProblems(doc *goquery.Document, lang string, data []string) []string {
	var out []string
	doc.Find("body *").AddBack().Contents().Each(func(_ int, n *goquery.Selection) {
		node := n.Get(0)
		if node.Type != html.TextNode || strings.TrimSpace(node.Data) == "" {
			return
		}
		if n.ParentsFiltered(".tk").Length() > 0 {
			return // the day view's hour ticks, under the day's title
		}
		at := where{cell: n.ParentsFiltered("td, th, svg").Length() > 0, doc: n.ParentsFiltered(".prose").Length() > 0,
			foreign: n.ParentsFiltered("[lang]").First().AttrOr("lang", lang) != lang}
		out = append(out, textProblems(node.Data, at, lang, data)...)
	})
	return out
}
