package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestE2ERefusalToRequest is issue 38's "one click" in Chromium: Bob's
// booking is refused because Erin holds the GPU; one click on "request
// priority" opens the request form filled with what he asked (the GPU
// ticked, the same start and end), showing who holds the GPU until when,
// live as the range changes.
func TestE2ERefusalToRequest(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			bobCtx := browser(t)
			f := newPrioWeb(t, d)
			*f.now = time.Now()
			srv := httptest.NewServer(f.env.Server.Echo)
			defer srv.Close()
			g := itoa(f.gpu(t, "node-a", 0))
			f.book(t, f.erin, []int64{f.gpu(t, "node-a", 0)}, 25, 27, "")
			start := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour)
			startIn, endIn := start.Format("2006-01-02T15:04"), start.Add(3*time.Hour).Format("2006-01-02T15:04")
			if err := devSignIn(bobCtx, srv.URL, "bob@example.org"); err != nil {
				t.Fatalf("sign in: %v", err)
			}
			err := doSteps(bobCtx,
				chromedp.Navigate(srv.URL+"/bookings/new?start="+startIn+"&end="+endIn),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="booking-form"]`)),
				chromedp.Click(chromedp.CSS(`[data-testid="pick-gpu-`+g+`"]`)),
				chromedp.Submit(chromedp.CSS(`[data-testid="booking-form"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="conflicts"]`)),
				chromedp.Click(chromedp.CSS(`[data-testid="offer-request-link"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-form"]`)),
			)
			if err != nil {
				t.Fatalf("refused booking to request: %v", err)
			}
			got, err := chromedp.Run(bobCtx, chromedp.Evaluate[[]string](`[document.querySelector('#starts_at').value, document.querySelector('#ends_at').value,
				String(document.querySelector('[data-testid="pick-gpu-`+g+`"]').checked), document.querySelector('[data-testid="gpu-state-`+g+`"]').innerText]`))
			if err != nil || len(got) != 4 {
				t.Fatalf("read the request form: %v %v", got, err)
			}
			if got[0] != startIn || got[1] != endIn || got[2] != "true" || !strings.Contains(got[3], "Erin Member") {
				t.Errorf("request form: start %q end %q ticked %s state %q; want %q %q, ticked, Erin", got[0], got[1], got[2], got[3], startIn, endIn)
			}
			// Live, as on the booking form: a later range, after Erin's
			// booking, shows the GPU free without a reload.
			later, laterEnd := start.Add(6*time.Hour).Format("2006-01-02T15:04"), start.Add(8*time.Hour).Format("2006-01-02T15:04")
			if _, err := chromedp.Run(bobCtx, chromedp.Evaluate[bool](`for (const [id, v] of [['ends_at', '`+laterEnd+`'], ['starts_at', '`+later+`']]) {
					const i = document.getElementById(id); i.value = v; i.dispatchEvent(new Event('change', {bubbles: true})) }; true`)); err != nil {
				t.Fatalf("change the range: %v", err)
			}
			err = doSteps(bobCtx,
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="gpu-state-`+g+`"][data-state="free"]`)),
			)
			if err != nil {
				t.Fatalf("the request form's GPU states are not live: %v", err)
			}
		})
	}
}
