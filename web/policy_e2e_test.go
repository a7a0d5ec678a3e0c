package web_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/web"
)

// TestE2EPolicyLiveCheck ticks GPUs on the booking form in real Chromium:
// htmx posts the form to /bookings/check on every change and the verdict
// names the broken rule before anything is submitted; unticking one makes
// it fine, and submitting still works as a plain form.
func TestE2EPolicyLiveCheck(t *testing.T) {
	t.Parallel() // its own server, fixture and browser context
	ctx := browser(t)
	f := newCalFixture(t, store.SQLite, func(c *web.Config) { c.Now = time.Now })
	limits := []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 2}}
	if err := f.env.DB.SaveScopeLimits(context.Background(), models.ScopeGlobal, 0, limits, time.Now(), models.CLIActor); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.env.Server.Echo)
	defer srv.Close()
	start := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour)
	a := []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1), f.gpu(t, "node-a", 2)}
	verdict := `document.querySelector('[data-testid="policy-check"]').innerText`
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/login"),
		chromedp.SetValue(chromedp.CSS("#email"), "bob@example.org"),
		chromedp.Submit(chromedp.CSS(`[data-testid="dev-login-form"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="whoami"]`)),
		chromedp.Navigate(srv.URL+"/bookings/new?start="+start.Format("2006-01-02T15:04")+"&end="+start.Add(2*time.Hour).Format("2006-01-02T15:04")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="booking-form"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(a[0])+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(a[1])+`"]`)),
	)
	if err != nil {
		t.Fatalf("open the form and tick two GPUs: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](verdict+`.includes("Within policy")`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("no verdict for two GPUs: %v", err)
	}
	// The verdict grows beside (on a phone, below) the submit button, which
	// stays where the pointer aims at it.
	submitY := `document.querySelector('[data-testid="booking-submit"]').getBoundingClientRect().top + window.scrollY`
	before, err := chromedp.Run(ctx, chromedp.Evaluate[float64](submitY))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(a[2])+`"]`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector('[data-testid="breach-max_gpus"]')`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
		t.Fatalf("the live check never named the rule: %v\n%s", err, text)
	}
	keepScreenshot(t, ctx, artefactDir(t), "booking-form-policy-breach.png")
	if after, err := chromedp.Run(ctx, chromedp.Evaluate[float64](submitY)); err != nil || after != before {
		t.Errorf("the submit button moved from y=%v to y=%v (%v) when the verdict named a breach", before, after, err)
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](verdict))
	if !strings.Contains(text, "at most 2 GPUs") || !strings.Contains(text, "priority request") {
		t.Errorf("verdict = %q", text)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+itoa(a[2])+`"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](verdict+`.includes("Within policy")`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the verdict never cleared: %v", err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="booking-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(calMine)),
	)
	if err != nil {
		t.Fatalf("submit as a plain form: %v", err)
	}
}
