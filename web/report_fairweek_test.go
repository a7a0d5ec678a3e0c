package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/storetest/fairweek"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// TestReportFairWeekPagesAndCSV reads the fairness fixture's DST week and
// normal week (models/store/storetest/fairweek) on every report page and
// every CSV export of its tables, on both databases, and checks each cell
// against the figures worked out by hand: each user's My usage (figures,
// days, trend, the fair-share sentence), both team pages as their leads
// see them, and the cluster page (summary and users) as an admin sees it.
func TestReportFairWeekPagesAndCSV(t *testing.T) {
	t.Parallel()
	for _, c := range fairweek.Weeks {
		t.Run(c.Week, func(t *testing.T) {
			t.Parallel()
			fairWeekPages(t, c)
		})
	}
}

func fairWeekPages(t *testing.T, c fairweek.Case) {
	w := c.Parse()
	want := fairweek.Expect(c, models.DefaultReportRules.UnbookedWeight)
	now := w.End.Add(50 * time.Hour) // the Tuesday after: the week is closed
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d, func(cfg *web.Config) { cfg.Location = fairweek.Berlin; cfg.Now = func() time.Time { return now } })
			id := fairweek.Build(t, env.DB, w)
			must(t, env.DB.SetAdmin(context.Background(), id.Fay, true, models.CLIActor))
			clients := map[string]*webtest.Client{}
			for _, name := range fairweek.Names {
				clients[name] = env.Client()
				clients[name].SignIn(fairweek.Email(name), name)
			}
			for _, name := range fairweek.Names {
				res := checkFairPage(t, clients[name], "/usage?week="+c.Week, name, map[string]fairweek.Table{
					"figures": want.Figures[name], "days": want.Days[name], "trend": want.Trend[name]})
				if got := strings.TrimSpace(res.Doc.Find(`[data-testid="fairshare-sentence"]`).Text()); got != want.Sentence[name] {
					t.Errorf("%s: fair-share sentence %q, want %q", name, got, want.Sentence[name])
				}
				checkFairNumbersZh(t, clients[name], name, "/usage?week="+c.Week, want.Figures[name])
			}
			for _, tm := range []struct {
				lead, name string
				id         int64
			}{{"ann", "T1", id.T1}, {"cat", "T2", id.T2}} {
				checkFairPage(t, clients[tm.lead], "/usage/team/"+itoa(tm.id)+"?week="+c.Week, tm.name, map[string]fairweek.Table{"members": want.Team[tm.name]})
			}
			checkFairPage(t, clients["fay"], "/admin/usage?week="+c.Week, "cluster", map[string]fairweek.Table{
				"cluster": want.Cluster, "users": want.Users})
		})
	}
}

// checkFairPage checks each table of the page at path, and its CSV export.
func checkFairPage(t *testing.T, cl *webtest.Client, path, who string, tables map[string]fairweek.Table) *webtest.Response {
	t.Helper()
	res := cl.Get(path)
	if res.Code != http.StatusOK {
		t.Fatalf("%s (%s): %d", path, who, res.Code)
	}
	for id, want := range tables {
		got, ok := fairweek.HTMLTable(res.Doc, want.Head)
		if !ok || res.Doc.Find(`[data-testid="table-`+id+`"]`).Length() != 1 {
			t.Errorf("%s (%s): no table %s", path, who, id)
			continue
		}
		fairweek.Check(t, who+" page "+id, got, want)
		csv := cl.Get(path + "&format=csv&table=" + id)
		if csv.Code != http.StatusOK {
			t.Errorf("%s CSV %s: %d", path, id, csv.Code)
			continue
		}
		fairweek.Check(t, who+" CSV "+id, fairweek.CSVTable(t, csv.Body.String()), want)
	}
	return res
}

// checkFairNumbersZh reads the figures table of the page in Chinese: every
// figure that is a number in English (hours, counts, percentages, the
// factor) is the same number there, row for row.
func checkFairNumbersZh(t *testing.T, cl *webtest.Client, name, path string, want fairweek.Table) {
	t.Helper()
	cl.Header.Set("Accept-Language", "zh-CN")
	defer cl.Header.Del("Accept-Language")
	res := cl.Get(path)
	rows := res.Doc.Find(`[data-testid="table-figures"] tbody tr`)
	if res.Code != http.StatusOK || rows.Length() != len(want.Rows) || !strings.Contains(res.Doc.Find("h1").Text(), "我的") {
		t.Fatalf("%s in Chinese: %d, %d rows, title %q", name, res.Code, rows.Length(), res.Doc.Find("h1").Text())
	}
	rows.Each(func(i int, tr *goquery.Selection) {
		v := want.Rows[i][1]
		if strings.Trim(v, "0123456789.%") != "" {
			return // words: "n/a", "nobody", the rank
		}
		if got := strings.TrimSpace(tr.Find("td").Eq(1).Text()); got != v {
			t.Errorf("%s in Chinese: %s is %q, want %q", name, strings.TrimSpace(tr.Find("td").First().Text()), got, v)
		}
	})
}
