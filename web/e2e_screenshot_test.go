package web_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gpubook/gpubook/models"
)

// screenshot fills the calendar with demo-like data and saves a PNG of the
// week view and of the home page (for docs/calendar.png and docs/home.png:
// GPUBOOK_SCREENSHOT=../docs/calendar.png).
func screenshot(t *testing.T, ctx context.Context, f *calFixture, base, path string) {
	t.Helper()
	f.addNode(t, "gpu-h100-01", 8, "NVIDIA H100 80GB HBM3", 81920)
	f.addNode(t, "gpu-l40s-01", 4, "NVIDIA L40S", 46068)
	me, err := f.env.DB.UserByEmail(context.Background(), "erin@example.org")
	if err != nil {
		t.Fatal(err)
	}
	people := []*models.User{me, f.bob, me, f.env.AddUser("chen@example.org", "Chen Wei", false), f.env.AddUser("dana@example.org", "Dana K.", false)}
	notes := []string{"llama-3 finetune", "ablation sweep", "eval", "diffusion run", "", "paper deadline"}
	now := time.Now().Truncate(30 * time.Minute)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	n := 0
	for _, node := range f.nodes {
		for _, g := range node.GPUs {
			for k := 0; k < 4; k++ {
				n++
				start := day.Add(time.Duration((n*7+k*31)%130+k*40) * time.Hour / 2).Add(-48 * time.Hour)
				end := start.Add(time.Duration(4+(n*k)%20) * time.Hour)
				u := people[(n+k)%len(people)]
				_, _ = f.env.DB.CreateBooking(context.Background(), models.NewBooking{UserID: u.ID, GPUIDs: []int64{g.ID},
					StartsAt: start, EndsAt: end, Note: notes[(n+k)%len(notes)]}, models.DefaultBookingLimits, start, models.CLIActor)
			}
		}
	}
	_ = f.env.DB.SetGPUService(context.Background(), f.gpu(t, "gpu-l40s-01", 3), false, "fan replacement", models.CLIActor)
	shot(t, ctx, base+"/calendar", `[data-testid="cal-grid"]`, path)
	// The home page beside it (docs/home.png): what is free now and the
	// one-click booking a first-time user meets.
	shot(t, ctx, base+"/", "body", filepath.Join(filepath.Dir(path), "home.png"))
}

// shot saves a 1280×800 PNG of url once sel is visible.
func shot(t *testing.T, ctx context.Context, url, sel, path string) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot page %s: %v", url, err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}
