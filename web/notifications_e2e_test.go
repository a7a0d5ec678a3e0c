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

// TestE2EPreemptedOwnerSeesNotice: after a pre-empting approval, Frank
// (English) and Erin (Chinese), whose bookings gave way, sign in in
// Chromium, see the bell's count, open the notifications and read what
// happened in their language; marking it read (htmx) clears the bell.
func TestE2EPreemptedOwnerSeesNotice(t *testing.T) {
	t.Parallel() // its own server, fixture and browser context
	bctx := browser(t)
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
	erins := f.book(t, f.erin, []int64{f.gpu(t, "node-a", 0)}, 23, 28, "")
	franks := f.book(t, frank, []int64{f.gpu(t, "node-a", 1)}, 26, 30, "")
	start := f.now.Add(24 * time.Hour)
	r := &models.PriorityRequest{UserID: f.bob.ID, GPUIDs: []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)}, StartsAt: start,
		EndsAt: start.Add(3 * time.Hour), Purpose: "p", Urgency: "u", Plan: "p", GiveBack: "g", Preempt: true}
	if err := f.env.DB.CreateRequest(ctx, r, models.DefaultBookingLimits, time.Now(), models.CLIActor, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.DB.ApproveRequest(ctx, r.ID, f.carol, "", models.AnyPlan, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	text := func(sel string) string {
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(document.querySelector('`+sel+`')||{innerText:''}).innerText`))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	for _, tc := range []struct {
		email, bell, notice string
		booking             int64
	}{
		{"frank@example.org", "Notifications", "Your booking #" + itoa(franks.ID) + " was shortened or split to make room for priority request #" + itoa(r.ID), franks.ID},
		{"erin@example.org", "通知", "为给优先申请 #" + itoa(r.ID) + " 腾出位置，您的预订 #" + itoa(erins.ID) + " 已被缩短或拆分", erins.ID},
	} {
		if err := devSignIn(bctx, srv.URL, tc.email); err != nil {
			t.Fatal(err)
		}
		if got := text(`[data-testid="unread-count"]`); got != "1" {
			t.Errorf("%s: bell count = %q, want 1", tc.email, got)
		}
		if got := text(`[data-testid="nav-notifications"]`); !strings.Contains(got, tc.bell) {
			t.Errorf("%s: bell = %q, want %q", tc.email, got, tc.bell)
		}
		err := chromedp.Do(bctx,
			chromedp.Click(chromedp.CSS(`[data-testid="nav-notifications"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="notice-text"]`)),
		)
		if err != nil {
			t.Fatalf("%s: open notifications: %v", tc.email, err)
		}
		if got := text(`[data-testid="notice-text"]`); !strings.Contains(got, tc.notice) {
			t.Errorf("%s: notice = %q, want it to contain %q", tc.email, got, tc.notice)
		}
		err = chromedp.Do(bctx,
			chromedp.Click(chromedp.CSS(`[data-testid="mark-read"]`)),
			chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="unread-count"]`)),
			chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="mark-read"]`)),
		)
		if err != nil {
			t.Fatalf("%s: mark read: %v", tc.email, err)
		}
		err = chromedp.Do(bctx,
			chromedp.Click(chromedp.CSS(`[data-testid="notice-link"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="booking-`+itoa(tc.booking)+`"]`)),
			chromedp.Submit(chromedp.CSS(`form[action="/logout"]`)),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/login"]`)),
		)
		if err != nil {
			t.Fatalf("%s: follow the link and sign out: %v", tc.email, err)
		}
	}
}
