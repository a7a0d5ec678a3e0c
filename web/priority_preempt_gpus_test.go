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
			f := newPrioWeb(t, d)
			ctx := context.Background()
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
			if !strings.Contains(what, "on 2 of its 4 GPUs") || strings.Count(what, " and ") != 2 {
				t.Errorf("plan says %q, want three parts, the middle one on 2 of its 4 GPUs", what)
			}
			if got := strings.TrimSpace(page.Doc.Find(testid("plan-total")).Text()); got != "6 GPU-hours" {
				t.Errorf("plan total %q, want 6 GPU-hours", got)
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
			if got, want := strings.Join(held, ", "), "1h0m0s–2h0m0s ×4, 2h0m0s–5h0m0s ×2, 5h0m0s–8h0m0s ×4"; got != want {
				t.Errorf("Erin holds %s, want %s", got, want)
			}
			var body string
			f.env.DB.Gorm.Table("outbox").Select("text_body").Where("kind = ? AND to_email = ?", "preempted", "erin@example.org").Scan(&body)
			if !strings.Contains(body, "4 块 GPU 中保留 2 块") || !strings.Contains(body, "6 GPU 小时") {
				t.Errorf("Erin's email = %q", body)
			}
		})
	}
}
