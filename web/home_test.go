package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// The home page answers "can I run now?": my running booking with time
// left and the login command, my next one, the GPUs free now by node and
// model with a one-click booking, and for admins what needs attention.
func TestHomeCanIRunNow(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			a0, a1 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)
			f.book(t, f.bob, []int64{a0, a1}, -1, 2, "") // 09:12–12:12, running
			f.book(t, f.bob, []int64{a0}, 5, 6, "")      // 15:12–16:12, next
			f.book(t, f.alice, []int64{f.gpu(t, "node-a", 2)}, 3, 4, "")
			bob := f.signedIn(f.bob)
			doc := bob.Get("/").Doc
			if got := doc.Find(testid("home-current")).Text(); !strings.Contains(got, "node-a: 2 GPUs") || !strings.Contains(got, "2 h left, until Wed 3 Jun 12:12") {
				t.Errorf("current = %q", got)
			}
			if got := doc.Find(testid("login-cmd")).Text(); got != "ssh node-a" {
				t.Errorf("login command = %q", got)
			}
			if got := doc.Find(testid("home-next")).Text(); !strings.Contains(got, "1 GPU on node-a") || !strings.Contains(got, "in 5 h") {
				t.Errorf("next = %q", got)
			}
			if got := doc.Find(testid("free-node-a")).Text(); !strings.Contains(got, "2 free") || !strings.Contains(got, "for 3 h (until Wed 3 Jun 13:12)") {
				t.Errorf("node-a free = %q", got)
			}
			if got := doc.Find(testid("free-node-b")).Text(); !strings.Contains(got, "2 free") || !strings.Contains(got, "more than a day") {
				t.Errorf("node-b free = %q", got)
			}
			if doc.Find(testid("home-admin")).Length() != 0 {
				t.Error("a user sees the admin box")
			}
			if got := f.signedIn(f.alice).Get("/").Doc.Find(testid("home-offline")).Text(); !strings.Contains(got, "online") {
				t.Errorf("admin box = %q", got)
			}
			// One click books two H100s now, through the normal path.
			nodeB := itoa(f.nodes[1].ID)
			quick := url.Values{"node": {nodeB}, "model": {"NVIDIA H100 80GB HBM3"}, "count": {"2"}, "hours": {"2"}}
			res := bob.Post("/bookings/now", quick)
			if res.Code != http.StatusSeeOther {
				t.Fatalf("book now: %d %s", res.Code, res.Body.String())
			}
			bs, _ := f.env.DB.Bookings(t.Context(), models.BookingFilter{NodeID: f.nodes[1].ID})
			if len(bs) != 1 || len(bs[0].GPUIDs) != 2 || bs[0].UserID != f.bob.ID || !bs[0].StartsAt.Equal(bookingClock) || bs[0].EndsAt.Sub(bs[0].StartsAt).Hours() != 2 {
				t.Fatalf("booked = %+v", bs)
			}
			// Nothing left free there: the form says so, nothing written.
			res = bob.Post("/bookings/now", quick)
			if res.Code != http.StatusUnprocessableEntity || !strings.Contains(res.Doc.Find(testid("error-gpu_ids")).Text(), "Only 0 GPUs") {
				t.Errorf("none free: %d %q", res.Code, res.Doc.Find(testid("error-gpu_ids")).Text())
			}
			// Free now but booked later: the conflict is reported as the form does.
			res = bob.Post("/bookings/now", url.Values{"node": {itoa(f.nodes[0].ID)}, "model": {"NVIDIA A100-SXM4-80GB"}, "count": {"2"}, "hours": {"4"}})
			if res.Code != http.StatusConflict || !strings.Contains(res.Doc.Find(testid("conflicts")).Text(), "GPU 2 is booked by Alice Admin") {
				t.Errorf("conflict: %d %q", res.Code, res.Doc.Find(testid("conflicts")).Text())
			}
		})
	}
}

// Only those who decide requests (admins and team leads) see the
// Approvals tab.
func TestApprovalsTabOnlyForDeciders(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			carol := f.env.AddUser("carol@example.org", "Carol Lead", false)
			team := &models.Team{Name: "vision"}
			if err := f.env.DB.CreateTeam(t.Context(), team, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			m := &models.Membership{TeamID: team.ID, UserID: carol.ID, Role: models.RoleLead, Source: models.SourceManual}
			if err := f.env.DB.SetMembership(t.Context(), m, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				u    *models.User
				want int
			}{{f.bob, 0}, {f.alice, 1}, {carol, 1}} {
				if got := f.signedIn(tc.u).Get("/").Doc.Find(testid("nav-approvals")).Length(); got != tc.want {
					t.Errorf("%s sees %d Approvals tabs, want %d", tc.u.Name, got, tc.want)
				}
			}
		})
	}
}
