package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// consoleErrors collects what the browser reports as an error (console
// errors, uncaught exceptions, CSP and other log entries) and accepts the
// confirmation dialogs htmx opens.
type consoleErrors struct {
	mu   sync.Mutex
	msgs []string
}

func (c *consoleErrors) listen(t *testing.T, ctx context.Context) {
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				c.add(fmt.Sprintf("console.error: %v", e.Args))
			}
		case *runtime.EventExceptionThrown:
			c.add("exception: " + e.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				c.add("log: " + e.Entry.Text)
			}
		case *page.EventJavascriptDialogOpening:
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (c *consoleErrors) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, s)
}

func (c *consoleErrors) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.msgs
	c.msgs = nil
	return out
}

// artefactDir is where screenshots are kept: $GPUBOOK_ARTEFACTS, or ""
// when it is not set. A screenshot costs Chromium a paint and a PNG (the
// page sweeps take about 100), so without a folder to keep them in none is
// taken.
func artefactDir(t *testing.T) string {
	d := os.Getenv("GPUBOOK_ARTEFACTS")
	if d == "" {
		return ""
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// keepScreenshot saves a PNG of ctx's page as dir/name, unless dir is "".
func keepScreenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestE2EBookingFormAndHome, in real Chromium: the booking form shows a
// taken GPU as taken and updates when the range changes; the home page's
// one-click booking books; no page logs an error; the home page and the
// form fit 1280 px and 390 px without sideways scrolling, in English and
// Chinese (screenshots kept in $GPUBOOK_ARTEFACTS when it is set).
func TestE2EBookingFormAndHome(t *testing.T) {
	t.Parallel() // its own server, fixture and browser context
	ctx := browser(t)
	errs := &consoleErrors{}
	errs.listen(t, ctx)
	f := newCalFixture(t, store.SQLite)
	*f.now = time.Now().UTC().Truncate(time.Minute)
	srv := httptest.NewServer(f.env.Server.Echo)
	t.Cleanup(srv.Close) // after the parallel page sweeps below
	a1 := f.gpu(t, "node-a", 1)
	f.book(t, f.alice, []int64{a1}, 1, 3, "")
	local := func(h float64) string {
		return f.now.Add(time.Duration(h * float64(time.Hour))).Format("2006-01-02T15:04")
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/login"),
		chromedp.SetValue(chromedp.CSS("#email"), "bob@example.org"),
		chromedp.Submit(chromedp.CSS("#email")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="whoami"]`)),
		chromedp.Navigate(srv.URL+"/bookings/new?node="+itoa(f.nodes[0].ID)+"&start="+local(1.5)+"&end="+local(2.5)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="gpu-picks"]`)),
	)
	if err != nil {
		t.Fatalf("sign in and open the form: %v", err)
	}
	state := `document.querySelector('[data-testid="gpu-state-` + itoa(a1) + `"]').dataset.state`
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](state)); err != nil || got != "taken" {
		t.Fatalf("GPU 1 over Alice's booking = %q (%v), want taken", got, err)
	}
	// Move the range past her booking: the boxes follow without a reload.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](`(() => {
		for (const [id, v] of [["starts_at", "`+local(3)+`"], ["ends_at", "`+local(4)+`"]]) {
			const el = document.getElementById(id); el.value = v;
			el.dispatchEvent(new Event('change', {bubbles: true}));
		}
		return null;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](state+` === "free"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("GPU 1 never showed free for the later range: %v", err)
	}
	// The home page's one click books node-b's H100s now.
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(chromedp.CSS(`[data-testid="quick-submit-node-b"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="cal-grid"]`)),
	)
	if err != nil {
		t.Fatalf("one-click booking: %v", err)
	}
	bs, err := f.env.DB.Bookings(context.Background(), models.BookingFilter{NodeID: f.nodes[1].ID})
	if err != nil || len(bs) != 1 || bs[0].UserID != f.bob.ID {
		t.Fatalf("node-b bookings after one click = %+v (%v)", bs, err)
	}
	// On a phone the booking's actions are on the screen, not beyond a
	// table's sideways scroll.
	err = chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL+"/bookings"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="action-release"]`)))
	if err != nil {
		t.Fatalf("my bookings on a phone: %v", err)
	}
	right, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`Math.max(...[...document.querySelectorAll('[data-testid="action-release"], [data-testid="action-extend"]')].map(b => b.getBoundingClientRect().right))`))
	if err != nil || right > 390 {
		t.Errorf("on a 390 px phone the release and extend buttons end at x=%v (%v)", right, err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	// A Tokyo browser's pages are in its zone without a click (issue 41;
	// TestE2EBrowserZone), and the zone is not stored for Bob.
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"}); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"))
	if err == nil {
		err = waitMainText(ctx, "Asia/Tokyo")
	}
	if err != nil {
		t.Fatalf("home in the browser's zone: %v", err)
	}
	if u, err := f.env.DB.UserByEmail(context.Background(), "bob@example.org"); err != nil || u.TimeZone != "" {
		t.Fatalf("stored zone = %q (%v), want none", u.TimeZone, err)
	}
	if got := errs.take(); len(got) > 0 {
		t.Errorf("browser errors: %s", strings.Join(got, "; "))
	}
	// The researcher's pages and the admin's, side by side, each in a
	// browser context of its own whose pages have 30 s each (under load the
	// researcher's sweep, sharing the form's context and its time, ran out).
	t.Run("researcher pages", func(t *testing.T) {
		t.Parallel()
		rctx, rerrs := sweepBrowser(t, srv.URL, "bob@example.org", "Asia/Tokyo")
		checkPages(t, rctx, srv.URL, rerrs, "bob", "/", "/bookings/new", "/bookings", "/calendar", "/calendar?view=day", "/limits",
			"/limits/ledger", "/usage", "/usage/definitions", "/requests/new", "/profile", "/status", "/violations/mine", "/notifications")
	})
	t.Run("admin pages", func(t *testing.T) {
		t.Parallel()
		actx, aerrs := sweepBrowser(t, srv.URL, "alice@example.org", "")
		checkPages(t, actx, srv.URL, aerrs, "admin", "/approvals", "/admin", "/admin/nodes", "/admin/users", "/admin/users/"+itoa(f.bob.ID),
			"/admin/teams", "/admin/groups", "/admin/audit", "/admin/policies", "/admin/agents", "/admin/violations", "/admin/usage", "/admin/import")
	})
}

// sweepBrowser is a browser context for checkPages, signed in as email
// (development sign-in), in the time zone zone unless "".
func sweepBrowser(t *testing.T, base, email, zone string) (context.Context, *consoleErrors) {
	ctx := browserFor(t, 0)
	errs := &consoleErrors{}
	errs.listen(t, ctx)
	if zone != "" {
		if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone}); err != nil {
			t.Fatal(err)
		}
	}
	page, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	if _, err := chromedp.Call(page, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(page, chromedp.Navigate(base+"/login"), chromedp.SetValue(chromedp.CSS("#email"), email),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="whoami"]`)))
	if err != nil {
		t.Fatalf("sign in as %s: %v", email, err)
	}
	return ctx, errs
}

// pageTimeout bounds each page of a sweep.
const pageTimeout = 30 * time.Second

// overflowingJS names the first elements that reach past the page's right
// edge, outermost first, for a sideways-scrolling page's failure message.
const overflowingJS = `(() => {
  const w = document.documentElement.clientWidth, out = [];
  const clipped = el => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== "visible") return true;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll("*")) {
    if (clipped(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.right > w + 1 && out.length < 6) {
      const cls = el.getAttribute("class");
      out.push(el.tagName.toLowerCase() + (cls ? "." + cls.split(" ").join(".") : "") + " right=" + Math.round(r.right));
    }
  }
  return out;
})()`

// checkPages visits the main pages in both languages at a desktop and a
// phone width: no console error, no sideways scrolling, and a screenshot
// each when GPUBOOK_ARTEFACTS names a folder to keep them in.
func checkPages(t *testing.T, ctx context.Context, base string, errs *consoleErrors, who string, pages ...string) {
	dir := artefactDir(t)
	for _, lang := range []string{"en", "zh-CN"} {
		if lang != "en" { // the browser's default is English
			ctx, cancel := context.WithTimeout(ctx, pageTimeout)
			defer cancel()
			err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.Click(chromedp.CSS(`[data-testid="lang-`+lang+`"]`)),
				chromedp.WaitVisible(chromedp.CSS(`html[lang="`+lang+`"]`)))
			if err != nil {
				t.Fatalf("switch to %s: %v", lang, err)
			}
		}
		for _, pg := range pages {
			ctx, cancel := context.WithTimeout(ctx, pageTimeout)
			defer cancel()
			// Loaded once, at the desktop width, then narrowed to the
			// phone's: the style sheets' media queries apply again and the
			// page is laid out anew, as a phone would lay it out (no
			// script of these pages reads the window's width), for half
			// the page loads.
			for i, size := range [][2]int64{{1280, 800}, {390, 844}} {
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(size[0], size[1])); err != nil {
					t.Fatalf("%s %s at %d px: %v", lang, pg, size[0], err)
				}
				if i == 0 {
					if err := chromedp.Do(ctx, chromedp.Navigate(base+pg), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
						t.Fatalf("%s %s: %v", lang, pg, err)
					}
				}
				wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
				if err != nil || (wide && !(strings.HasPrefix(pg, "/calendar") && size[0] < 1280)) {
					over, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowingJS))
					t.Errorf("%s %s at %d px scrolls sideways (%v); wider than the page: %v", lang, pg, size[0], err, over)
				}
				name := strings.Trim(strings.NewReplacer("/", "-", "?", "-", "=", "-").Replace(pg), "-")
				if name == "" {
					name = "home"
				}
				keepScreenshot(t, ctx, dir, fmt.Sprintf("%s-%s-%s-%d.png", who, name, lang, size[0]))
			}
			if got := errs.take(); len(got) > 0 {
				t.Errorf("%s %s: browser errors: %s", lang, pg, strings.Join(got, "; "))
			}
		}
	}
	if dir != "" {
		t.Logf("screenshots in %s", dir)
	}
}
