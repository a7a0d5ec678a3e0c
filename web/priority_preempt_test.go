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

// TestRequestTeamAndWithdraw: Bob, in two teams, sends his request to the
// second team's leads, then withdraws it; nobody else may.
func TestRequestTeamAndWithdraw(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			ctx := context.Background()
			nlp := &models.Team{Name: "nlp"}
			if err := f.env.DB.CreateTeam(ctx, nlp, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			if err := f.env.DB.SetMembership(ctx, &models.Membership{TeamID: nlp.ID, UserID: f.bob.ID, Role: models.RoleMember}, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			bob := f.signedIn(f.bob)
			page := bob.Get("/requests/new?gpu=" + itoa(f.gpu(t, "node-a", 0)))
			if got := page.Doc.Find(testid("request-team") + " option").Length(); got != 2 {
				t.Fatalf("team choices = %d, want 2", got)
			}
			form := url.Values{"gpu": {itoa(f.gpu(t, "node-a", 0))}, "starts_at": {"2026-06-03T11:00"}, "ends_at": {"2026-06-03T13:00"},
				"purpose": {"p"}, "urgency": {"u"}, "plan": {"p"}, "give_back": {"g"}, "team_id": {itoa(99999)}}
			if res := bob.Post("/requests", form); res.Code != http.StatusUnprocessableEntity || res.Doc.Find(testid("error-team_id")).Length() != 1 {
				t.Fatalf("request to a team he is not in: %d", res.Code)
			}
			form.Set("team_id", itoa(nlp.ID))
			created := bob.Post("/requests", form)
			if created.Code != http.StatusSeeOther {
				t.Fatalf("file request: %d %s", created.Code, created.Body.String())
			}
			reqPath := created.Header().Get("Location")
			if res := f.signedIn(f.carol).Get(reqPath); res.Code != http.StatusNotFound {
				t.Errorf("the other team's lead reads it: %d", res.Code)
			}
			show := bob.Get(reqPath)
			if show.Doc.Find(testid("withdraw")).Length() != 1 || !strings.Contains(show.Doc.Find(testid("request-"+strings.TrimPrefix(reqPath, "/requests/"))).Text(), "(nlp)") {
				t.Fatalf("request page lacks its team or the withdraw button")
			}
			if res := f.signedIn(f.alice).Post(reqPath+"/withdraw", nil); res.Code != http.StatusForbidden {
				t.Errorf("an admin withdraws Bob's request: %d", res.Code)
			}
			if res := bob.Post(reqPath+"/withdraw", nil); res.Code != http.StatusSeeOther {
				t.Fatalf("withdraw: %d %s", res.Code, res.Body.String())
			}
			if res := bob.Post(reqPath+"/withdraw", nil); res.Code != http.StatusConflict {
				t.Errorf("second withdrawal: %d", res.Code)
			}
			show = bob.Get(reqPath)
			if got := show.Doc.Find(testid("request-status")).Text(); got != "withdrawn" || show.Doc.Find(testid("withdraw")).Length() != 0 {
				t.Errorf("after withdrawal: status %q", got)
			}
			if got := show.Doc.Find(testid("request-history") + " li").Last().Text(); !strings.Contains(got, "Bob Builder withdrew the request.") {
				t.Errorf("history = %q", got)
			}
		})
	}
}

// TestApprovalRefusesAChangedCalendar: a booking made while the lead reads
// the preview changes the plan; the approval is refused with "review
// again" and the page then shows the new plan.
func TestApprovalRefusesAChangedCalendar(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			ctx := context.Background()
			for _, i := range []int{2, 3} { // nothing can move
				if err := f.env.DB.SetGPUService(ctx, f.gpu(t, "node-a", i), false, "fan", models.CLIActor); err != nil {
					t.Fatal(err)
				}
			}
			first := f.book(t, f.erin, []int64{f.gpu(t, "node-a", 0)}, 1, 4, "")
			r := &models.PriorityRequest{UserID: f.bob.ID, GPUIDs: []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)},
				StartsAt: f.now.Add(2 * time.Hour), EndsAt: f.now.Add(5 * time.Hour), Purpose: "p", Urgency: "u", Plan: "p", GiveBack: "g", Preempt: true}
			if err := f.env.DB.CreateRequest(ctx, r, models.DefaultBookingLimits, *f.now, models.CLIActor, nil); err != nil {
				t.Fatal(err)
			}
			reqPath := "/requests/" + itoa(r.ID)
			carol := f.signedIn(f.carol)
			plan, _ := carol.Get(reqPath).Doc.Find(`input[name="plan"]`).Attr("value")
			later := f.book(t, f.erin, []int64{f.gpu(t, "node-a", 1)}, 3, 7, "")
			res := carol.Post(reqPath+"/approve", url.Values{"plan": {plan}})
			if res.Code != http.StatusConflict || !strings.Contains(res.Body.String(), "The calendar changed") {
				t.Fatalf("approve a stale preview: %d", res.Code)
			}
			if b, _ := f.env.DB.Booking(ctx, first.ID); !b.EndsAt.Equal(first.EndsAt) {
				t.Fatalf("a refused approval split a booking: %+v", b)
			}
			page := carol.Get(reqPath)
			if page.Doc.Find(testid("plan-row-"+itoa(later.ID))).Length() != 1 || strings.TrimSpace(page.Doc.Find(testid("plan-total")).Text()) != "4 GPU-hours" {
				t.Fatalf("new preview lacks the new booking: %s", page.Doc.Find(testid("preempt-plan")).Text())
			}
			plan, _ = page.Doc.Find(`input[name="plan"]`).Attr("value")
			if res := carol.Post(reqPath+"/approve", url.Values{"plan": {plan}}); res.Code != http.StatusSeeOther {
				t.Fatalf("approve the new preview: %d", res.Code)
			}
		})
	}
}
