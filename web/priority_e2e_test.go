package web_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gpubook/gpubook/models"
)

// devSignIn signs a browser in through the development sign-in.
func devSignIn(ctx context.Context, base, email string) error {
	return chromedp.Do(ctx,
		chromedp.Navigate(base+"/login"),
		chromedp.SetValue(chromedp.CSS("#email"), email),
		chromedp.Submit(chromedp.CSS(`[data-testid="dev-login-form"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="whoami"]`)),
	)
}

// TestE2EPriorityRequest is the "done" story in Chromium: Bob's
// over-limit booking is refused with the reason, he resubmits it as a
// pre-empting priority request, his lead Carol approves it from the
// approvals queue, and Erin, whose booking gave way, has an email queued.
func TestE2EPriorityRequest(t *testing.T) {
	t.Parallel() // its own server, fixture and browser context
	bobCtx := browser(t)
	f := newPrioWeb(t, "sqlite")
	*f.now = time.Now()
	srv := httptest.NewServer(f.env.Server.Echo)
	defer srv.Close()
	ctx := context.Background()
	if err := f.env.DB.SaveScopeLimits(ctx, models.ScopeGlobal, 0, []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 2}}, time.Now(), models.CLIActor); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour)
	erins := f.book(t, f.erin, []int64{f.gpu(t, "node-a", 2)}, 25, 26, "")
	if err := devSignIn(bobCtx, srv.URL, "bob@example.org"); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	err := doSteps(bobCtx,
		chromedp.Navigate(srv.URL+"/bookings/new?start="+start.Format("2006-01-02T15:04")+"&end="+start.Add(3*time.Hour).Format("2006-01-02T15:04")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="booking-form"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(f.gpu(t, "node-a", 0))+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(f.gpu(t, "node-a", 1))+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(f.gpu(t, "node-a", 2))+`"]`)),
		// The live check answers the third pick above the submit button and
		// pushes it down: a click aimed before that lands beside it (under
		// load the answer came between the aim and the click, and the
		// form was never sent). Bob reads the verdict, then submits.
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="policy-check"] [data-testid="breaches"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="booking-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="form-problem"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="as-priority"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-form"]`)),
		chromedp.SendKeys(chromedp.CSS("#purpose"), "camera-ready experiments"),
		chromedp.SendKeys(chromedp.CSS("#urgency"), "deadline tomorrow"),
		chromedp.SendKeys(chromedp.CSS("#plan"), "3 runs of 1 h"),
		chromedp.SendKeys(chromedp.CSS("#give_back"), "right after"),
		chromedp.Click(chromedp.CSS(`[data-testid="preempt"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="request-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-status"]`)),
	)
	if err != nil {
		t.Fatalf("refused booking to priority request: %v", err)
	}
	carolCtx := browser(t)
	if err := devSignIn(carolCtx, srv.URL, "carol@example.org"); err != nil {
		t.Fatal(err)
	}
	err = doSteps(carolCtx,
		chromedp.Click(chromedp.CSS(`[data-testid="nav-approvals"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve-form"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="approve-form"] input[name="comment"]`), "go"),
		chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decision"]`)),
	)
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	status, _ := chromedp.Run(carolCtx, chromedp.Evaluate[string](`document.querySelector('[data-testid="request-status"]').innerText`))
	if strings.TrimSpace(status) != "approved" {
		t.Errorf("status = %q", status)
	}
	if b, _ := f.env.DB.Booking(ctx, erins.ID); b.Status != models.StatusConfirmed || len(b.GPUIDs) != 1 || b.GPUIDs[0] != f.gpu(t, "node-a", 3) {
		t.Errorf("Erin's booking: %s on %v, want moved to the free GPU 3", b.Status, b.GPUIDs)
	}
	var n int64
	f.env.DB.Gorm.Table("outbox").Where("kind = ? AND to_email = ?", models.NoticePreempted, "erin@example.org").Count(&n)
	if n != 1 {
		t.Errorf("pre-emption emails to Erin = %d", n)
	}
}

// TestE2EPreemptPreview: Carol sees, before she clicks, what approving
// Bob's 3-hour request costs each owner (GPUs 2 and 3 are out of service,
// so nothing can move), approves, and each owner finds their booking split
// in "My bookings": Erin in Chinese, Frank in English.
func TestE2EPreemptPreview(t *testing.T) {
	t.Parallel() // its own server, fixture and browser context
	carolCtx := browser(t)
	f := newPrioWeb(t, "sqlite")
	*f.now = time.Now()
	srv := httptest.NewServer(f.env.Server.Echo)
	defer srv.Close()
	ctx := context.Background()
	if err := f.env.DB.SaveScopeLimits(ctx, models.ScopeGlobal, 0, nil, time.Now(), models.CLIActor); err != nil {
		t.Fatal(err)
	}
	frank := f.env.AddUser("frank@example.org", "Frank Other", false)
	for _, i := range []int{2, 3} {
		if err := f.env.DB.SetGPUService(ctx, f.gpu(t, "node-a", i), false, "fan", models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	erins := f.book(t, f.erin, []int64{f.gpu(t, "node-a", 0)}, 23, 28, "erin's run")
	franks := f.book(t, frank, []int64{f.gpu(t, "node-a", 1)}, 26, 30, "frank's run")
	start := f.now.Add(24 * time.Hour)
	r := &models.PriorityRequest{UserID: f.bob.ID, GPUIDs: []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)}, StartsAt: start,
		EndsAt: start.Add(3 * time.Hour), Purpose: "camera-ready", Urgency: "deadline", Plan: "3 runs", GiveBack: "after", Preempt: true}
	if err := f.env.DB.CreateRequest(ctx, r, models.DefaultBookingLimits, time.Now(), models.CLIActor, nil); err != nil {
		t.Fatal(err)
	}
	if err := devSignIn(carolCtx, srv.URL, "carol@example.org"); err != nil {
		t.Fatal(err)
	}
	text := func(bctx context.Context, sel string) string {
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('`+sel+`').innerText`))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	err := chromedp.Do(carolCtx,
		chromedp.Click(chromedp.CSS(`[data-testid="nav-approvals"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="preempt-plan"]`)),
	)
	if err != nil {
		t.Fatalf("approvals: %v", err)
	}
	erinRow, frankRow := `[data-testid="plan-row-`+itoa(erins.ID)+`"]`, `[data-testid="plan-row-`+itoa(franks.ID)+`"]`
	if got := text(carolCtx, erinRow); !strings.Contains(got, "Erin Member") || !strings.Contains(got, "vision") || !strings.Contains(got, "split: keeps") ||
		!strings.Contains(got, " and ") || !strings.HasSuffix(got, "3 GPU-hours") {
		t.Errorf("Erin's row = %q", got)
	}
	if got := text(carolCtx, frankRow+` [data-testid="plan-loss"]`); got != "1 GPU-hours" {
		t.Errorf("Frank's loss = %q", got)
	}
	if got := text(carolCtx, `[data-testid="plan-total"]`); got != "4 GPU-hours" {
		t.Errorf("total = %q", got)
	}
	err = chromedp.Do(carolCtx,
		chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decision"]`)),
	)
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	for _, o := range []struct {
		email, title string
		booking      int64
		parts        int
	}{{"erin@example.org", "我的预订", erins.ID, 2}, {"frank@example.org", "My bookings", franks.ID, 1}} {
		octx := browser(t)
		if err := devSignIn(octx, srv.URL, o.email); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(octx, chromedp.Navigate(srv.URL+"/bookings"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="booking-`+itoa(o.booking)+`"]`))); err != nil {
			t.Fatalf("%s: my bookings: %v", o.email, err)
		}
		if got := text(octx, "h1"); got != o.title {
			t.Errorf("%s: title %q, want %q", o.email, got, o.title)
		}
		rows, err := chromedp.Run(octx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="section-upcoming"] tr[data-testid^="booking-"]').length`))
		if err != nil {
			t.Fatal(err)
		}
		if rows != o.parts {
			t.Errorf("%s sees %d upcoming bookings, want %d (the split parts)", o.email, rows, o.parts)
		}
	}
}
