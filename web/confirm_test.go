package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestDestructiveClicksAskFirst: revoking an API token or a feed, removing
// a team member or a group mapping first shows a page that asks (no
// JavaScript needed) and changes nothing; its button does it.
func TestDestructiveClicksAskFirst(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			ctx := context.Background()
			tok, _, err := f.env.DB.CreateToken(ctx, f.alice.ID, "gpubook CLI", *f.now, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			feed, _, err := f.env.DB.CreateFeedToken(ctx, f.alice.ID, 0, *f.now, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			team := &models.Team{Name: "Vision"}
			if err := f.env.DB.CreateTeam(ctx, team, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			if err := f.env.DB.SetMembership(ctx, &models.Membership{TeamID: team.ID, UserID: f.bob.ID, Role: models.RoleMember}, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			gm := &models.GroupMapping{Group: "ml-vision", TeamID: team.ID, Role: models.RoleMember}
			if err := f.env.DB.CreateGroupMapping(ctx, gm, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			admin := f.signedIn(f.alice)
			for _, c := range []struct {
				name, path, back string
				done             func() bool
			}{
				{"token", "/profile/tokens/" + itoa(tok.ID) + "/revoke", "/profile#tokens", func() bool {
					toks, _ := f.env.DB.Tokens(ctx, f.alice.ID)
					return len(toks) == 1 && toks[0].RevokedAt != nil
				}},
				{"feed", "/profile/feeds/" + itoa(feed.ID) + "/revoke", "/profile#feeds", func() bool {
					fs, _ := f.env.DB.FeedTokens(ctx, f.alice.ID)
					return len(fs) == 0 || fs[0].RevokedAt != nil
				}},
				{"member", "/admin/teams/" + itoa(team.ID) + "/members/" + itoa(f.bob.ID) + "/remove", "/admin/teams/" + itoa(team.ID), func() bool {
					ms, _ := f.env.DB.MembershipsOf(ctx, f.bob.ID)
					return len(ms) == 0
				}},
				{"group", "/admin/groups/" + itoa(gm.ID) + "/remove", "/admin/groups", func() bool {
					ms, _ := f.env.DB.GroupMappings(ctx)
					return len(ms) == 0
				}},
			} {
				ask := admin.Post(c.path, nil)
				form := ask.Doc.Find(testid("confirm-action") + " form")
				action, _ := form.Attr("action")
				confirm, _ := form.Find(`input[name=confirm]`).Attr("value")
				back, _ := ask.Doc.Find(testid("confirm-no")).Attr("href")
				if ask.Code != http.StatusOK || action != c.path || confirm != "yes" || back != c.back {
					t.Errorf("%s: %d, form %q confirm %q back %q; want the question", c.name, ask.Code, action, confirm, back)
				}
				if c.done() {
					t.Errorf("%s: done before the confirmation", c.name)
				}
				if res := admin.Post(c.path, url.Values{"confirm": {"yes"}}); res.Code != http.StatusSeeOther || !c.done() {
					t.Errorf("%s confirmed: %d, done %v", c.name, res.Code, c.done())
				}
			}
			if res := admin.Post("/admin/groups/999/remove", nil); res.Code != http.StatusNotFound {
				t.Errorf("unknown mapping: %d, want 404 rather than a question", res.Code)
			}
		})
	}
}

// TestChineseConfirmPagesHaveNoEnglish: the questions of point 7 and the
// deactivation's, and the page of a deactivated user, in Chinese only.
func TestChineseConfirmPagesHaveNoEnglish(t *testing.T) {
	f := newCalFixture(t, "sqlite")
	ctx := context.Background()
	tok, _, err := f.env.DB.CreateToken(ctx, f.alice.ID, "笔记本", *f.now, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	team := &models.Team{Name: "视觉组"}
	if err := f.env.DB.CreateTeam(ctx, team, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	if err := f.env.DB.SetMembership(ctx, &models.Membership{TeamID: team.ID, UserID: f.bob.ID, Role: models.RoleMember}, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	c := f.signedIn(f.alice)
	c.Header.Set("Accept-Language", "zh-CN")
	for _, path := range []string{"/profile/tokens/" + itoa(tok.ID) + "/revoke", "/admin/teams/" + itoa(team.ID) + "/members/" + itoa(f.bob.ID) + "/remove",
		"/admin/users/" + itoa(f.bob.ID) + "/disable"} {
		res := c.Post(path, nil)
		res.Doc.Find("script, style, code").Remove()
		check(t, "zh "+path, visibleText(res.Doc.Find("main")))
	}
	if res := c.Post("/admin/users/"+itoa(f.bob.ID)+"/disable", url.Values{"confirm": {"yes"}}); res.Code != http.StatusSeeOther {
		t.Fatalf("disable: %d", res.Code)
	}
	res := c.Get("/admin/users/" + itoa(f.bob.ID))
	if res.Doc.Find(testid("user-disabled")).Length() != 1 {
		t.Errorf("the deactivated user's page does not say so")
	}
	res.Doc.Find("script, style, code").Remove()
	check(t, "zh deactivated user page", visibleText(res.Doc.Find("main")))
}
