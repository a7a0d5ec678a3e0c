package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// adminPages are the admin pages without a parameter: each must be one
// click away from every other through the admin tabs.
var adminPages = []string{"/admin/nodes", "/admin/agents", "/admin/violations", "/admin/users", "/admin/teams",
	"/admin/groups", "/admin/policies", "/admin/usage", "/admin/audit"}

// Every admin page links every other from its tabs, and a table with no
// rows says so instead of showing a bare header.
func TestAdminTabsReachEveryPage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			env.AddUser("root@example.org", "Root", true)
			team := &models.Team{Name: "empty"}
			if err := env.DB.CreateTeam(t.Context(), team, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			c := env.Client()
			c.SignIn("root@example.org", "Root")
			for _, page := range append([]string{"/admin", "/admin/teams/" + itoa(team.ID)}, adminPages...) {
				res := c.Get(page)
				if res.Code != http.StatusOK {
					t.Errorf("%s: status %d", page, res.Code)
					continue
				}
				tabs := map[string]bool{}
				res.Doc.Find("nav.subnav a").Each(func(_ int, a *goquery.Selection) {
					href, _ := a.Attr("href")
					tabs[href] = true
				})
				for _, want := range adminPages {
					if !tabs[want] {
						t.Errorf("%s: no tab to %s", page, want)
					}
				}
				res.Doc.Find("table").Each(func(_ int, tb *goquery.Selection) {
					if tb.Find("tbody tr").Length() == 0 {
						id, _ := tb.Attr("data-testid")
						if !strings.HasPrefix(id, "table-") { // report tables: the fairness pages' own
							t.Errorf("%s: table %q is empty without a word", page, id)
						}
					}
				})
			}
		})
	}
}
