package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/web"
)

// TestE2EBrowserZone: in Chromium with a forced time zone, a brand-new
// user's first page after signing in is in the browser's zone, with no
// offer to click and nothing stored; a browser in "UTC" is offered
// nothing on a cluster in "Etc/UTC", the same zone by another name.
func TestE2EBrowserZone(t *testing.T) {
	t.Parallel()
	etc, err := time.LoadLocation("Etc/UTC")
	if err != nil {
		t.Fatal(err)
	}
	f := newCalFixture(t, store.SQLite, func(c *web.Config) { c.Location = etc })
	srv := httptest.NewServer(f.env.Server.Echo)
	t.Cleanup(srv.Close)
	signIn := func(t *testing.T, zone, email string) context.Context {
		ctx := browser(t)
		errs := &consoleErrors{}
		errs.listen(t, ctx)
		if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone}); err != nil {
			t.Fatal(err)
		}
		err := doSteps(ctx, chromedp.Navigate(srv.URL+"/login"), chromedp.SetValue(chromedp.CSS("#email"), email),
			chromedp.SetValue(chromedp.CSS("#name"), "New "+zone),
			chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="whoami"]`)))
		if err != nil {
			t.Fatalf("sign in as %s: %v", email, err)
		}
		t.Cleanup(func() {
			if got := errs.take(); len(got) > 0 {
				t.Errorf("browser errors: %s", strings.Join(got, "; "))
			}
		})
		return ctx
	}
	// state is the page's path, its main text, whether the offer shows
	// and whether app.js had to reload the page to reach the zone.
	const state = `[location.pathname, document.querySelector("main").innerText,
		String(!!document.querySelector('[data-testid="zone-offer"]:not([hidden])')),
		String(sessionStorage.getItem("gpubook_tz_reloaded"))]`
	t.Run("new user's first page", func(t *testing.T) {
		t.Parallel()
		ctx := signIn(t, "America/New_York", "newbie@example.org")
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](state))
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != "/" || !strings.Contains(got[1], "America/New_York") || got[2] != "false" || got[3] != "null" {
			t.Errorf("first page %s: offer shown %s, reloaded for %s; want home in America/New_York at once with no offer:\n%s", got[0], got[2], got[3], got[1])
		}
		u, err := f.env.DB.UserByEmail(context.Background(), "newbie@example.org")
		if err != nil || u.TimeZone != "" {
			t.Errorf("stored zone %q (%v): the browser's zone is used, not chosen for them", u.TimeZone, err)
		}
	})
	t.Run("a stale zone is caught up", func(t *testing.T) {
		t.Parallel()
		// The browser moved to Tokyo since its cookie was set: the first
		// page shown in the old zone reloads itself once, in the new one.
		ctx := signIn(t, "Europe/Berlin", "carol@example.org")
		if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"}); err != nil {
			t.Fatal(err)
		}
		if err := doSteps(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
			t.Fatal(err)
		}
		if err := waitMainText(ctx, "Asia/Tokyo"); err != nil {
			t.Fatalf("home after the move: %v", err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](state))
		if err != nil || got[2] != "false" || got[3] != "Asia/Tokyo" {
			t.Errorf("after the move: offer shown %v, reloaded for %v (%v)", got[2], got[3], err)
		}
	})
	t.Run("UTC is Etc/UTC", func(t *testing.T) {
		t.Parallel()
		ctx := signIn(t, "UTC", "dave@example.org")
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](state))
		if err != nil || got[2] != "false" {
			t.Errorf("a UTC browser on an Etc/UTC cluster: offer shown %v (%v)", got, err)
		}
		// Where no cookie reaches the server, the offer compares the zones
		// by what they read, not by name.
		same, err := chromedp.Run(ctx, chromedp.Evaluate[[]bool](`[sameZone("UTC", "Etc/UTC"), sameZone("Asia/Tokyo", "Asia/Seoul"), sameZone("Europe/Berlin", "Africa/Lagos"), sameZone("UTC", "Mars/Olympus")]`))
		if err != nil || len(same) != 4 || !same[0] || !same[1] || same[2] || same[3] {
			t.Errorf("sameZone UTC~Etc/UTC, Tokyo~Seoul, Berlin~Lagos, UTC~Mars = %v (%v), want true true false false", same, err)
		}
	})
}

// waitMainText waits until the page, loaded completely, says text in its
// main part; across a reload, whose page the browser replaces while it is
// asked (chromedp's Poll then fails).
func waitMainText(ctx context.Context, text string) error {
	js := `document.readyState === "complete" && !!document.querySelector("main") && document.querySelector("main").innerText.includes(` + strconv.Quote(text) + `)`
	var last error
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return nil
		}
		last = err
	}
	return fmt.Errorf("the page never said %q (%v)", text, last)
}
