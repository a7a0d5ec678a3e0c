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

// TestPreemptTakesOnlyTheGPUsNeeded: Bob's 2 GPUs × 3 h request against
// Erin's 4-GPU booking. The lead is shown that Erin keeps 2 of her 4 GPUs
// through the request and loses 6 GPU-hours (not 12); the approval does
// exactly that, the calendar's bookings say so, and Erin's email (in
// Chinese) says how many GPUs she kept.
func TestPreemptTakesOnlyTheGPUsNeeded(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			checkPreemptGPUs(t, d, false)
		})
	}
}

// TestPreemptAllOrNothingSaysWhy: the same, once an admin has made the
// vision team's multi-GPU bookings all or nothing: Erin's booking gives up
// all four GPUs over the request (12 GPU-hours, more than the request's
// 6), and the preview names the policy that forced it.
func TestPreemptAllOrNothingSaysWhy(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			checkPreemptGPUs(t, d, true)
		})
	}
}

func checkPreemptGPUs(t *testing.T, d string, whole bool) {
	f := newPrioWeb(t, d)
	ctx := context.Background()
	if whole {
		admin := f.signedIn(f.alice)
		teamURL := "/admin/teams/" + itoa(f.team.ID)
		admin.Get(teamURL)
		if res := admin.Post(teamURL+"/whole-bookings", url.Values{"whole_bookings": {"on"}}); res.Code != http.StatusSeeOther {
			t.Fatalf("set all or nothing: %d", res.Code)
		}
		if _, on := admin.Get(teamURL).Doc.Find("#whole-bookings").Attr("checked"); !on {
			t.Fatalf("the team page does not show the bookings as all or nothing")
		}
	}
	if res := f.signedIn(f.alice).Post("/admin/policies/limits", url.Values{"scope": {"global"}, "max_gpus.peak": {"8"},
		"max_length.peak": {"48"}, "max_gpus.offpeak": {"8"}, "max_length.offpeak": {"48"}}); res.Code != http.StatusSeeOther {
		t.Fatalf("lift the peak limits: %d", res.Code)
	}
	all := []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1), f.gpu(t, "node-a", 2), f.gpu(t, "node-a", 3)}
	erins := f.book(t, f.erin, all, 1, 8, "")
	r := &models.PriorityRequest{UserID: f.bob.ID, GPUIDs: all[:2], StartsAt: f.now.Add(2 * time.Hour), EndsAt: f.now.Add(5 * time.Hour),
		Purpose: "p", Urgency: "u", Plan: "p", GiveBack: "g", Preempt: true}
	if err := f.env.DB.CreateRequest(ctx, r, models.DefaultBookingLimits, *f.now, models.CLIActor, nil); err != nil {
		t.Fatal(err)
	}
	reqPath := "/requests/" + itoa(r.ID)
	carol := f.signedIn(f.carol)
	page := carol.Get(reqPath)
	what := strings.TrimSpace(page.Doc.Find(testid("plan-row-"+itoa(erins.ID)) + " " + testid("plan-what")).Text())
	wantWhat, wantTotal, wantHeld, wantMail := "on 2 of its 4 GPUs", "6 GPU-hours", "1h0m0s–2h0m0s ×4, 2h0m0s–5h0m0s ×2, 5h0m0s–8h0m0s ×4", "4 块 GPU 中保留 2 块"
	if whole {
		wantWhat, wantTotal, wantHeld, wantMail = "all or nothing: the owner's team keeps multi-GPU bookings whole, so it gives up all 4 GPUs",
			"12 GPU-hours", "1h0m0s–2h0m0s ×4, 5h0m0s–8h0m0s ×4", "整体预订：所属团队的多卡预订不可拆卡"
	}
	if !strings.Contains(what, wantWhat) {
		t.Errorf("plan says %q, want %q", what, wantWhat)
	}
	if got := strings.TrimSpace(page.Doc.Find(testid("plan-total")).Text()); got != wantTotal {
		t.Errorf("plan total %q, want %s", got, wantTotal)
	}
	plan, _ := page.Doc.Find(`input[name="plan"]`).Attr("value")
	if res := carol.Post(reqPath+"/approve", url.Values{"plan": {plan}}); res.Code != http.StatusSeeOther {
		t.Fatalf("approve: %d %s", res.Code, res.Body.String())
	}
	bs, err := f.env.DB.Bookings(ctx, models.BookingFilter{UserID: f.erin.ID, From: f.now.Add(-time.Hour), To: f.now.Add(10 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, b := range bs {
		held = append(held, b.StartsAt.Sub(*f.now).String()+"–"+b.EndsAt.Sub(*f.now).String()+" ×"+itoa(int64(len(b.GPUIDs))))
	}
	if got, want := strings.Join(held, ", "), wantHeld; got != want {
		t.Errorf("Erin holds %s, want %s", got, want)
	}
	var body string
	f.env.DB.Gorm.Table("outbox").Select("text_body").Where("kind = ? AND to_email = ?", "preempted", "erin@example.org").Scan(&body)
	if !strings.Contains(body, wantMail) || !strings.Contains(body, strings.Replace(wantTotal, "GPU-hours", "GPU 小时", 1)) {
		t.Errorf("Erin's email = %q", body)
	}
}
