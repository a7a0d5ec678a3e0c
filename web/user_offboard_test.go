package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestAdminOffboardsAUserFromThePage deactivates Bob from his admin page
// (after its no-JS confirmation): his future booking is cancelled with an
// email, the running one ends now, the past one stays, his token, feed and
// session stop working and he cannot sign in again, all audited; then he
// is reactivated and renamed, keeping his bookings.
func TestAdminOffboardsAUserFromThePage(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			ctx := context.Background()
			g := f.gpu(t, "node-a", 0)
			past := f.book(t, f.bob, []int64{g}, -6, -4, "past")
			running := f.book(t, f.bob, []int64{g}, -1, 2, "running")
			future := f.book(t, f.bob, []int64{g}, 3, 5, "future")
			api := f.env.API(f.bob)
			_, feed, err := f.env.DB.CreateFeedToken(ctx, f.bob.ID, 0, *f.now, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			bob := f.signedIn(f.bob)
			admin := f.signedIn(f.alice)
			path := "/admin/users/" + itoa(f.bob.ID)

			page := admin.Get(path)
			if page.Code != http.StatusOK || page.Doc.Find(testid("disable")).Length() != 1 || page.Doc.Find(testid("rename-form")).Length() != 1 {
				t.Fatalf("user page: %d, disable %d, rename %d", page.Code, page.Doc.Find(testid("disable")).Length(), page.Doc.Find(testid("rename-form")).Length())
			}
			ask := admin.Post(path+"/disable", nil)
			if ask.Code != http.StatusOK || ask.Doc.Find(testid("confirm-action")).Length() != 1 {
				t.Fatalf("disable without confirm: %d, want the confirmation page", ask.Code)
			}
			if u, _ := f.env.DB.User(ctx, f.bob.ID); u.Disabled() {
				t.Fatal("the confirmation page deactivated already")
			}
			if res := admin.Post(path+"/disable", url.Values{"confirm": {"yes"}}); res.Code != http.StatusSeeOther {
				t.Fatalf("disable: %d %s", res.Code, res.Body.String())
			}

			for _, c := range []struct {
				name   string
				b      *models.Booking
				status string
				end    time.Time
			}{
				{"past", past, models.StatusConfirmed, past.EndsAt},
				{"running", running, models.StatusConfirmed, *f.now},
				{"future", future, models.StatusCancelled, future.EndsAt},
			} {
				got, err := f.env.DB.Booking(ctx, c.b.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != c.status || !got.EndsAt.Equal(c.end) || got.UserID != f.bob.ID {
					t.Errorf("%s booking: status %s, ends %v, user %d; want %s, %v, %d", c.name, got.Status, got.EndsAt, got.UserID, c.status, c.end, f.bob.ID)
				}
			}
			if res := api.Get("/api/v1/me"); res.Code != http.StatusUnauthorized {
				t.Errorf("API token after deactivation: %d, want 401", res.Code)
			}
			if _, _, err := f.env.DB.FeedOwner(ctx, feed, *f.now); models.ErrorCode(err) != models.ENOTFOUND {
				t.Errorf("feed after deactivation: %v, want ENOTFOUND", err)
			}
			if res := bob.Get("/profile"); res.Code == http.StatusOK {
				t.Errorf("Bob's session still opens his profile")
			}
			retry := f.env.Client()
			retry.Get("/login")
			if res := retry.Post("/login/dev", url.Values{"email": {f.bob.Email}}); res.Code != http.StatusForbidden {
				t.Errorf("dev sign-in of a deactivated user: %d, want 403", res.Code)
			}
			if m, err := f.env.DB.OutboxMessageByKey(ctx, "disabled:user:"+itoa(f.bob.ID)+":"+itoa(f.now.Unix())); err != nil || m.ToEmail != f.bob.Email || m.Kind != models.NotifyAccountDisabled {
				t.Errorf("notice email: %v, %+v", err, m)
			}
			evs, err := f.env.DB.AuditEvents(ctx, models.AuditFilter{Action: models.AuditUserDisable})
			if err != nil || len(evs) != 1 || evs[0].TargetID != itoa(f.bob.ID) || evs[0].ActorID == nil || *evs[0].ActorID != f.alice.ID {
				t.Errorf("audit: %v %+v", err, evs)
			}
			list := admin.Get("/admin/users")
			if list.Doc.Find(testid("user-disabled")).Length() != 1 {
				t.Errorf("the users list does not mark Bob deactivated")
			}

			if res := admin.Post(path+"/enable", nil); res.Code != http.StatusSeeOther {
				t.Fatalf("enable: %d %s", res.Code, res.Body.String())
			}
			taken := admin.Post(path+"/rename", url.Values{"email": {f.alice.Email}})
			if taken.Code != http.StatusConflict || taken.Doc.Find(`#email[aria-invalid="true"]`).Length() != 1 {
				t.Errorf("rename to Alice's address: %d", taken.Code)
			}
			if res := admin.Post(path+"/rename", url.Values{"email": {"Bob.Builder@New.example.org"}}); res.Code != http.StatusSeeOther {
				t.Fatalf("rename: %d %s", res.Code, res.Body.String())
			}
			renamed := f.env.Client()
			renamed.SignIn("bob.builder@new.example.org", "")
			got, err := f.env.DB.Booking(ctx, past.ID)
			if err != nil || got.UserID != f.bob.ID {
				t.Errorf("past booking after rename: %v, user %d", err, got.UserID)
			}
			if u, _ := f.env.DB.UserByEmail(ctx, "bob.builder@new.example.org"); u == nil || u.ID != f.bob.ID || u.Name != f.bob.Name {
				t.Errorf("renamed user: %+v", u)
			}
		})
	}
}

// TestAdminCannotDisableThemselves keeps a portal from losing its last way in by a slip.
func TestAdminCannotDisableThemselves(t *testing.T) {
	f := newCalFixture(t, "sqlite")
	admin := f.signedIn(f.alice)
	if res := admin.Post("/admin/users/"+itoa(f.alice.ID)+"/disable", url.Values{"confirm": {"yes"}}); res.Code != http.StatusUnprocessableEntity {
		t.Errorf("self-disable: %d, want 422", res.Code)
	}
	if res := admin.Get("/admin/users/" + itoa(f.alice.ID)); res.Doc.Find(testid("disable")).Length() != 0 {
		t.Errorf("own page offers to deactivate")
	}
}

// TestZoneClickIsAuditedAsAZoneChange: the audit log says a person changed
// their language or time zone, not "the name or email", after the zone offer's click.
func TestZoneClickIsAuditedAsAZoneChange(t *testing.T) {
	f := newCalFixture(t, "sqlite")
	bob := f.signedIn(f.bob)
	if res := bob.Post("/profile/zone", url.Values{"time_zone": {"Asia/Shanghai"}}); res.Code != http.StatusSeeOther {
		t.Fatalf("zone: %d %s", res.Code, res.Body.String())
	}
	evs, err := f.env.DB.AuditEvents(context.Background(), models.AuditFilter{Action: models.AuditUserUpdate})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events: %v %+v", err, evs)
	}
	if got := models.DescribeAudit(evs[0]).Key; got != "audit.s.user_prefs" {
		t.Errorf("sentence %q, want audit.s.user_prefs (details %s)", got, evs[0].Details)
	}
}

// TestHomeSaysSignedInOnce: right after signing in, the flash says who is
// signed in; the home page does not say it a second time (the menu shows
// the name too).
func TestHomeSaysSignedInOnce(t *testing.T) {
	f := newCalFixture(t, "sqlite")
	c := f.env.Client()
	c.Get("/login")
	res := c.Post("/login/dev", url.Values{"email": {f.bob.Email}})
	home := c.Get(res.Header().Get("Location"))
	if n := strings.Count(home.Body.String(), "Signed in as"); n != 1 {
		t.Errorf("\"Signed in as\" %d times on the first page, want 1 (the flash)", n)
	}
}

// TestHomeFreeLineChinese: the free-GPU line of the Chinese home page has
// no space before its full-width comma ("空闲 4 块 ，" was shown).
func TestHomeFreeLineChinese(t *testing.T) {
	f := newCalFixture(t, "sqlite")
	c := f.signedIn(f.bob)
	c.Header.Set("Accept-Language", "zh-CN")
	line := c.Get("/").Doc.Find(testid("free-node-a") + " p").First().Text()
	if !strings.Contains(line, "空闲 4 块，") || strings.Contains(line, " ，") {
		t.Errorf("free line %q, want \"空闲 4 块，\" with no space before the comma", line)
	}
}
