package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// feedClock is the feed access tests' "now": Wednesday 2 December 2026, 09:00 UTC.
var feedClock = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// TestFeedRevokeAndRecreate: a revoked address answers 404 at once; a new
// address replaces the old one, which then answers 404 too.
func TestFeedRevokeAndRecreate(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newFeedFixture(t, d, time.UTC, feedClock)
			c := f.env.Client()
			c.SignIn("alice@example.org", "Alice")
			first := makeFeed(t, c, 0)
			if res, _ := fetchFeed(t, f.env, first); res.Code != http.StatusOK {
				t.Fatalf("new feed: %d", res.Code)
			}
			second := makeFeed(t, c, 0)
			if second == first {
				t.Fatal("a new address must differ from the old one")
			}
			if res, _ := fetchFeed(t, f.env, first); res.Code != http.StatusNotFound {
				t.Errorf("replaced address: %d, want 404", res.Code)
			}
			if res, _ := fetchFeed(t, f.env, second); res.Code != http.StatusOK {
				t.Errorf("new address: %d", res.Code)
			}
			page := c.Get("/profile")
			row := page.Doc.Find(`[data-testid=feed-team-0]`)
			if row.Find(`[data-testid=feed-recreate]`).Length() != 1 || row.Find(`[data-testid=feed-revoke]`).Length() != 1 {
				t.Fatalf("own feed row: %s", row.Text())
			}
			if strings.Contains(page.Body.String(), strings.TrimSuffix(strings.TrimPrefix(second, "/feeds/"), ".ics")) {
				t.Error("the profile page shows the token again: only its hash is kept")
			}
			action, _ := row.Find(`form[action$="/revoke"]`).Attr("action")
			if res := c.Post(action, url.Values{"confirm": {"yes"}}); res.Code != http.StatusSeeOther || res.Header().Get("Location") != "/profile#feeds" {
				t.Fatalf("revoke: %d %s", res.Code, res.Header().Get("Location"))
			}
			res, _ := fetchFeed(t, f.env, second)
			if res.Code != http.StatusNotFound || strings.Contains(res.Body.String(), "revoked") {
				t.Errorf("revoked address: %d, want a plain 404", res.Code)
			}
			if row := c.Get("/profile").Doc.Find(`[data-testid=feed-team-0]`); row.Find(`[data-testid=feed-create]`).Length() != 1 {
				t.Errorf("after revoking, the row offers no new address: %s", row.Text())
			}
			// Another user cannot revoke it, and learns nothing from trying.
			bob := f.env.Client()
			bob.SignIn("bob@example.org", "Bob")
			third := makeFeed(t, c, 0)
			toks, _ := f.env.DB.FeedTokens(context.Background(), f.user(t, "alice@example.org").ID)
			bob.Get("/profile")
			if res := bob.Post("/profile/feeds/"+itoa(toks[0].ID)+"/revoke", nil); res.Code != http.StatusNotFound {
				t.Errorf("Bob revoking Alice's feed: %d, want 404", res.Code)
			}
			if res, _ := fetchFeed(t, f.env, third); res.Code != http.StatusOK {
				t.Errorf("Alice's feed after Bob's try: %d", res.Code)
			}
		})
	}
}

// TestFeedTeam: a lead's team feed holds the members' bookings and nobody
// else's; a member cannot get it, an admin can get any team's, and a lead
// who steps down loses it.
func TestFeedTeam(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFeedFixture(t, d, time.UTC, feedClock)
			f.env.AddUser("dee@example.org", "Dee", true) // first, so that no signed-in user becomes admin as the first one
			clients := map[string]*webtest.Client{}
			for _, name := range []string{"ann", "bob", "cy"} {
				c := f.env.Client()
				c.SignIn(name+"@example.org", strings.ToUpper(name[:1])+name[1:])
				clients[name] = c
			}
			dee := f.env.Client()
			dee.SignIn("dee@example.org", "Dee")
			ann, bob, cy := f.user(t, "ann@example.org"), f.user(t, "bob@example.org"), f.user(t, "cy@example.org")
			if ann.IsAdmin || bob.IsAdmin {
				t.Fatal("Ann and Bob must not be admins here")
			}
			team := &models.Team{Name: "vision"}
			if err := f.env.DB.CreateTeam(ctx, team, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			setRole := func(u *models.User, role string) {
				t.Helper()
				if err := f.env.DB.SetMembership(ctx, &models.Membership{TeamID: team.ID, UserID: u.ID, Role: role, Source: models.SourceManual}, models.CLIActor); err != nil {
					t.Fatal(err)
				}
			}
			setRole(ann, models.RoleLead)
			setRole(bob, models.RoleMember)
			start := feedClock.Add(2 * time.Hour)
			anns := f.book(t, ann, start, start.Add(time.Hour), "", f.gpus[0])
			bobs := f.book(t, bob, start, start.Add(time.Hour), "bob's run", f.gpus[1])
			cys := f.book(t, cy, start.Add(time.Hour), start.Add(2*time.Hour), "", f.gpus[1])

			// Bob is a member, not a lead: no team row, and asking is refused
			// without writing anything; a malformed team is a message.
			bc := clients["bob"]
			if page := bc.Get("/profile"); page.Doc.Find(`[data-testid=feed-team-`+itoa(team.ID)+`]`).Length() != 0 || page.Doc.Find(`[data-testid=feed-admin-form]`).Length() != 0 {
				t.Error("a member is offered the team's feed")
			}
			if res := bc.Post("/profile/feeds", url.Values{"team": {itoa(team.ID)}}); res.Code != http.StatusForbidden {
				t.Errorf("member asking for the team feed: %d, want 403", res.Code)
			}
			for _, bad := range []string{"vision", "-1", "1e3", "99999999999999999999"} {
				res := bc.Post("/profile/feeds", url.Values{"team": {bad}})
				if res.Code != http.StatusUnprocessableEntity || !strings.Contains(res.Doc.Find(`#feeds .field-error`).Text(), "Choose a team from the list.") {
					t.Errorf("team %q: %d %q", bad, res.Code, res.Doc.Find(`#feeds .field-error`).Text())
				}
			}
			if toks, _ := f.env.DB.FeedTokens(ctx, bob.ID); len(toks) != 0 {
				t.Errorf("refused requests stored tokens: %+v", toks)
			}

			// Ann leads: her team feed has Ann's and Bob's bookings, not Cy's.
			if clients["ann"].Get("/profile").Doc.Find(`[data-testid=feed-team-`+itoa(team.ID)+`]`).Length() != 1 {
				t.Error("the lead is not offered the team's feed")
			}
			path := makeFeed(t, clients["ann"], team.ID)
			_, cal := fetchFeed(t, f.env, path)
			if cal == nil {
				t.Fatal("team feed refused")
			}
			evs := eventsByUID(cal)
			if len(evs) != 2 || evs[uid(anns)] == nil || evs[uid(bobs)] == nil || evs[uid(cys)] != nil {
				t.Fatalf("team feed events %v: want Ann's %d and Bob's %d, not Cy's %d", eventUIDs(evs), anns.ID, bobs.ID, cys.ID)
			}
			if got := calProp(cal, ics.PropertyXWRCalName); got != "gpubook: GPU bookings of team vision" {
				t.Errorf("team calendar name %q", got)
			}
			e := evs[uid(bobs)]
			if got := prop(e, ics.ComponentPropertySummary); got != "Bob: 1 × NVIDIA A100 on node-a" {
				t.Errorf("team summary %q", got)
			}
			if got := prop(e, ics.ComponentPropertyDescription); !strings.Contains(got, "Booked by: Bob <bob@example.org>") || !strings.Contains(got, "Note: bob's run") {
				t.Errorf("team description %q", got)
			}
			nodeID := f.mustBooking(t, bobs.ID).NodeID
			if got, want := prop(e, ics.ComponentPropertyUrl), feedBase+"/calendar?date=2026-12-02&node="+itoa(nodeID)+"&view=day"; got != want {
				t.Errorf("team link %q, want %q", got, want)
			}
			// Ann's own feed is hers only.
			_, own := fetchFeed(t, f.env, makeFeed(t, clients["ann"], 0))
			if evs := eventsByUID(own); len(evs) != 1 || evs[uid(anns)] == nil {
				t.Errorf("Ann's own feed %v", eventUIDs(evs))
			}

			// An admin who is no member may have any team's feed.
			if dee.Get("/profile").Doc.Find(`[data-testid=feed-admin-form] option[value="`+itoa(team.ID)+`"]`).Length() != 1 {
				t.Error("the admin is not offered the team")
			}
			if _, cal := fetchFeed(t, f.env, makeFeed(t, dee, team.ID)); cal == nil || len(cal.Events()) != 2 {
				t.Error("admin's team feed")
			}
			if res := dee.Post("/profile/feeds", url.Values{"team": {"999999"}}); res.Code != http.StatusNotFound {
				t.Errorf("admin, team that does not exist: %d, want 404", res.Code)
			}

			// Ann steps down: her team feed is gone at the next fetch.
			setRole(ann, models.RoleMember)
			if res, _ := fetchFeed(t, f.env, path); res.Code != http.StatusNotFound {
				t.Errorf("former lead's team feed: %d, want 404", res.Code)
			}
		})
	}
}

// mustBooking reads a booking from the store.
func (f *feedFixture) mustBooking(t *testing.T, id int64) *models.Booking {
	t.Helper()
	b, err := f.env.DB.Booking(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFeedBadTokens: whatever stands in the path, a feed that cannot be
// read is a 404 and writes nothing; well-formed but unknown tokens are
// looked up, malformed ones are not even that.
func TestFeedBadTokens(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newFeedFixture(t, d, time.UTC, feedClock)
			c := f.env.Client()
			c.SignIn("alice@example.org", "Alice")
			path := makeFeed(t, c, 0)
			tok := strings.TrimSuffix(strings.TrimPrefix(path, "/feeds/"), ".ics")
			unknown, _, _ := models.NewFeedSecret()
			f.now = f.now.Add(time.Hour) // a good fetch now would note itself
			before := f.snapshot(t)
			for _, p := range []string{
				"/feeds/x.ics", "/feeds/.ics", "/feeds/gpf_.ics", "/feeds/" + tok, "/feeds/" + tok + ".ICS",
				"/feeds/" + strings.ToUpper(tok) + ".ics", "/feeds/gpb_" + tok[4:] + ".ics", "/feeds/" + tok + "a.ics",
				"/feeds/" + tok[:len(tok)-1] + "%00.ics", "/feeds/" + tok[:len(tok)-1] + "1.ics", "/feeds/" + strings.Repeat("a", 5000) + ".ics",
				"/feeds/..%2f..%2fetc%2fpasswd", "/feeds/" + tok + ".ics/x", "/feeds/" + unknown + ".ics",
			} {
				res := f.env.Client().Get(p)
				if res.Code != http.StatusNotFound {
					t.Errorf("%.60s: %d, want 404", p, res.Code)
				}
				if len(res.Header().Values("Set-Cookie")) != 0 {
					t.Errorf("%.60s set a cookie", p)
				}
			}
			if after := f.snapshot(t); after != before {
				t.Errorf("bad tokens wrote to the database:\nbefore %s\nafter  %s", before, after)
			}
			if res, _ := fetchFeed(t, f.env, path); res.Code != http.StatusOK {
				t.Fatalf("the good token after the bad ones: %d", res.Code)
			}
			if after := f.snapshot(t); after == before {
				t.Error("a good fetch did not note itself: the snapshot cannot see writes")
			}
			// With the database gone, a malformed token is still a plain 404
			// (never looked up) while a well-formed one fails looking.
			if err := f.env.DB.SQL.Close(); err != nil {
				t.Fatal(err)
			}
			if res := f.env.Client().Get("/feeds/" + strings.ToUpper(tok) + ".ics"); res.Code != http.StatusNotFound {
				t.Errorf("malformed token without a database: %d, want 404", res.Code)
			}
			if res := f.env.Client().Get(path); res.Code != http.StatusInternalServerError {
				t.Errorf("well-formed token without a database: %d, want 500 (so the 404 above did not look)", res.Code)
			}
		})
	}
}

// snapshot is what a feed fetch could write: the feed tokens' rows and
// the audit log's length.
func (f *feedFixture) snapshot(t *testing.T) string {
	t.Helper()
	var rows []struct {
		ID         int64
		LastUsedAt *time.Time
		RevokedAt  *time.Time
	}
	if err := f.env.DB.Gorm.Table("feed_tokens").Select("id, last_used_at, revoked_at").Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	var audits int64
	if err := f.env.DB.Gorm.Table("audit_events").Count(&audits).Error; err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(itoa(r.ID))
		if r.LastUsedAt != nil {
			b.WriteString(" used " + r.LastUsedAt.UTC().Format(time.RFC3339))
		}
		if r.RevokedAt != nil {
			b.WriteString(" revoked")
		}
		b.WriteString("; ")
	}
	return b.String() + "audit " + itoa(audits)
}

// TestFeedProfileChinese: the feeds section and the new address speak
// Chinese on a zh-CN profile page.
func TestFeedProfileChinese(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, "sqlite", time.UTC, feedClock)
	c := f.env.Client()
	c.Header.Set("Accept-Language", "zh-CN")
	c.SignIn("alice@example.org", "Alice")
	page := c.Get("/profile")
	if got := page.Doc.Find(`#feeds h2`).Text(); got != "日历订阅" {
		t.Errorf("feeds heading %q", got)
	}
	if got := page.Doc.Find(`[data-testid=feed-create]`).Text(); got != "创建地址" {
		t.Errorf("create button %q", got)
	}
	makeFeed(t, c, 0)
	res := c.Post("/profile/feeds", url.Values{"team": {"0"}})
	if got := res.Doc.Find(`[data-testid=new-feed]`).Text(); !strings.Contains(got, "订阅“我的预订”的地址只显示这一次") || !strings.Contains(got, "在我的日历应用中订阅") {
		t.Errorf("new address in Chinese: %q", got)
	}
	if got := res.Doc.Find(`[data-testid=feed-recreate]`).Text(); got != "更换地址" {
		t.Errorf("re-create button %q", got)
	}
}
