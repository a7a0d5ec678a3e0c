package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/reports"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
	"github.com/gpubook/gpubook/web/webtest"
)

// weekSurfaces is every way of reading week 2026-W49 for alice: her page,
// its figures CSV, the team CSV, the cluster CSVs and the CLI preview.
type weekSurfaces struct {
	page, figuresCSV, teamCSV, usersCSV, clusterCSV, preview string
}

func readSurfaces(t *testing.T, root, alice *webtest.Client, run *reports.Weekly, team int64, u *models.User) weekSurfaces {
	t.Helper()
	get := func(c *webtest.Client, path string) string {
		res := c.Get(path)
		if res.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, res.Code, res.Body.String())
		}
		return res.Body.String()
	}
	page := alice.Get("/usage?week=2026-W49")
	preview, err := run.Preview(context.Background(), u, mustWeek(t, "2026-W49"))
	must(t, err)
	return weekSurfaces{
		page:       page.Doc.Find(`[data-testid="table-figures"]`).Text() + page.Doc.Find(`[data-testid="fairshare-sentence"]`).Text(),
		figuresCSV: get(alice, "/usage?week=2026-W49&format=csv&table=figures"),
		teamCSV:    get(alice, "/usage/team/"+itoa(team)+"?week=2026-W49&format=csv&table=members"),
		usersCSV:   get(root, "/admin/usage?week=2026-W49&format=csv&table=users"),
		clusterCSV: get(root, "/admin/usage?week=2026-W49&format=csv&table=cluster"),
		preview:    preview,
	}
}

func mustWeek(t *testing.T, s string) models.Week {
	t.Helper()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	w, err := models.ParseWeek(s, berlin)
	must(t, err)
	return w
}

// changeEverything takes a GPU out of service, adds a user to alice's
// team, changes the team's share weight and adds a second team with bob
// in it: each
// changes W49's figures when they are computed afresh.
func changeEverything(t *testing.T, env *webtest.Env, team int64) {
	t.Helper()
	ctx := context.Background()
	var gpu int64
	must(t, env.DB.Gorm.Raw(`SELECT MAX(id) FROM gpus`).Scan(&gpu).Error)
	must(t, env.DB.SetGPUService(ctx, gpu, false, "broken fan", models.CLIActor))
	carol := &models.User{Email: "carol@example.org", Name: "Carol"}
	must(t, env.DB.CreateUser(ctx, carol, models.CLIActor))
	must(t, env.DB.SetMembership(ctx, &models.Membership{TeamID: team, UserID: carol.ID, Role: models.RoleMember}, models.CLIActor))
	must(t, env.DB.SetTeamShareWeight(ctx, team, 3, models.CLIActor))
	other := &models.Team{Name: "B"}
	must(t, env.DB.CreateTeam(ctx, other, models.CLIActor))
	b, _ := env.DB.UserByEmail(ctx, "bob@example.org")
	must(t, env.DB.SetMembership(ctx, &models.Membership{TeamID: other.ID, UserID: b.ID, Role: models.RoleMember}, models.CLIActor))
}

// TestReportFrozenAfterSend: once W49 is sent, taking a GPU out of service,
// adding a user, changing memberships and share weights change nothing of
// W49 on any surface, which all show what the email said; a deliberate
// recompute does change it, shows the diff and is audited.
func TestReportFrozenAfterSend(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env, root, alice, _, team := reportEnv(t, d)
			ctx := context.Background()
			berlin, _ := time.LoadLocation("Europe/Berlin")
			run := &reports.Weekly{Store: env.DB, Mail: &views.Mail{I18n: i18n.MustLoad(), BaseURL: "https://gpubook.example.org", Location: berlin}, Location: berlin,
				Now: func() time.Time { return reportNow }}
			a, _ := env.DB.UserByEmail(ctx, "alice@example.org")
			if st := alice.Get("/usage?week=2026-W49").Doc.Find(`[data-week-state="ended"]`).Length(); st != 1 {
				t.Error("an ended week not yet sent should say its figures are not frozen yet")
			}
			if _, err := run.SendWeek(ctx, mustWeek(t, "2026-W49")); err != nil {
				t.Fatal(err)
			}
			mail, err := env.DB.OutboxMessageByKey(ctx, views.ReportDedupKey(mustWeek(t, "2026-W49"), a.ID))
			must(t, err)
			sent := readSurfaces(t, root, alice, run, team, a)
			// The preview is the email's text part with the subject and
			// greeting the email layout puts elsewhere.
			if parts := strings.SplitN(sent.preview, "\n\n", 3); len(parts) != 3 || !strings.Contains(mail.TextBody, parts[2]) {
				t.Fatalf("the preview is not the email's text:\n%s\n---\n%s", sent.preview, mail.TextBody)
			}
			for _, want := range []string{"1 of 2 by busy GPU-hours in A"} {
				if !strings.Contains(mail.TextBody, want) || !strings.Contains(mail.HTMLBody, want) || !strings.Contains(sent.page, want) {
					t.Errorf("%q missing from the email or the page", want)
				}
			}
			changeEverything(t, env, team)
			live, err := env.DB.ReportWeek(ctx, mustWeek(t, "2026-W49"), mustWeek(t, "2026-W49").End, models.ReportRules{})
			must(t, err)
			if r := live.UserReport(*a); r.RankOf != 3 || live.GPUCount != 1 {
				t.Fatalf("the changes should change a fresh computation: rank of %d, %d GPUs", r.RankOf, live.GPUCount)
			}
			if got := readSurfaces(t, root, alice, run, team, a); got != sent {
				t.Errorf("W49 changed after it was sent:\nbefore %+v\nafter  %+v", sent, got)
			}
			if res := alice.Get("/usage?week=2026-W49"); res.Doc.Find(`[data-week-state="frozen"]`).Length() != 1 {
				t.Error("a sent week should say its figures are frozen")
			}
			if res := alice.Get("/usage"); res.Doc.Find(`[data-week-state="in-progress"]`).Length() != 1 {
				t.Error("the week in progress should say its figures change until it ends")
			}
			if _, err := run.SendWeek(ctx, mustWeek(t, "2026-W49")); err != nil {
				t.Fatal(err) // a re-send reads the snapshot too (nothing new to queue)
			}
			checkRecompute(t, env, root, alice, sent)
		})
	}
}

// checkRecompute: the admin's button recomputes W49 from today's data,
// shows alice's rank going from 1/2 to 1/3, records one audit event, and
// the page then shows the new figures.
func checkRecompute(t *testing.T, env *webtest.Env, root, alice *webtest.Client, sent weekSurfaces) {
	t.Helper()
	if root.Get("/admin/usage?week=2026-W49").Doc.Find(`[data-testid="recompute-form"]`).Length() != 1 {
		t.Error("no recompute button on the cluster page of a closed week")
	}
	if res := alice.Post("/admin/usage/recompute", url.Values{"week": {"2026-W49"}}); res.Code != http.StatusForbidden {
		t.Errorf("a user recomputed: %d", res.Code)
	}
	res := root.Post("/admin/usage/recompute", url.Values{"week": {"2026-W49"}})
	if res.Code != http.StatusOK {
		t.Fatalf("recompute: %d %s", res.Code, res.Body.String())
	}
	a, _ := env.DB.UserByEmail(context.Background(), "alice@example.org")
	row := res.Doc.Find(`[data-testid="recompute-diff"] tr[data-table="figures"][data-user="` + itoa(a.ID) + `"]`).FilterFunction(
		func(_ int, tr *goquery.Selection) bool {
			return strings.TrimSpace(tr.Find("td").Eq(2).Text()) == "Rank"
		})
	if row.Length() != 1 || strings.TrimSpace(row.Find("td").Eq(3).Text()) != "1 of 2 by busy GPU-hours in A" ||
		strings.TrimSpace(row.Find("td").Eq(4).Text()) != "1 of 3 by busy GPU-hours in A" {
		t.Errorf("diff rows: %q", res.Doc.Find(`[data-testid="recompute-diff"]`).Text())
	}
	ev, err := env.DB.AuditEvents(context.Background(), models.AuditFilter{Action: models.AuditReportRecompute})
	must(t, err)
	if len(ev) != 1 || ev[0].TargetID != "2026-W49" || !strings.Contains(ev[0].Details, `"Figure":"Rank"`) {
		t.Errorf("audit: %+v", ev)
	}
	if page := alice.Get("/usage?week=2026-W49"); !strings.Contains(page.Doc.Find(`[data-testid="table-figures"]`).Text(), "1 of 3") {
		t.Error("after the recompute the page should show the new rank")
	}
	if res := root.Post("/admin/usage/recompute", url.Values{"week": {"2026-W50"}}); res.Code == http.StatusOK {
		t.Error("the week in progress cannot be recomputed")
	}
}
