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
	err := chromedp.Do(bobCtx,
		chromedp.Navigate(srv.URL+"/bookings/new?start="+start.Format("2006-01-02T15:04")+"&end="+start.Add(3*time.Hour).Format("2006-01-02T15:04")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="booking-form"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(f.gpu(t, "node-a", 0))+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(f.gpu(t, "node-a", 1))+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(f.gpu(t, "node-a", 2))+`"]`)),
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
		text, _ := chromedp.Run(bobCtx, chromedp.Evaluate[string](`document.querySelector('main')?.innerText`))
		t.Fatalf("refused booking to priority request: %v\n%s", err, text)
	}
	carolCtx := browser(t)
	if err := devSignIn(carolCtx, srv.URL, "carol@example.org"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(carolCtx,
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
	if b, _ := f.env.DB.Booking(ctx, erins.ID); b.Status != models.StatusCancelled {
		t.Errorf("Erin's booking: %s", b.Status)
	}
	var n int64
	f.env.DB.Gorm.Table("outbox").Where("kind = ? AND to_email = ?", models.NoticePreempted, "erin@example.org").Count(&n)
	if n != 1 {
		t.Errorf("pre-emption emails to Erin = %d", n)
	}
}
