package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/gpubook/gpubook/agent/agenttest/unitsandbox"
	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
)

// chromiumPaths are where Debian's packages put Chromium, in the order the
// tests take them: its headless shell (chromium-headless-shell: the same
// engine and DevTools protocol without the desktop browser's window and
// compositor layers), then the browser (chromium). With the shell the
// browser tests cost the machine less than half the CPU (-run 'E2E|Pages',
// two paired runs on a 2-core machine: 60.2, 69.0 s with the browser, 26.3,
// 26.7 s with the shell; wall 30.2, 34.8 → 13.4, 13.5 s).
var chromiumPaths = []string{"/usr/bin/chromium-headless-shell", "/usr/bin/chromium"}

// chromiumPath is the first of chromiumPaths that exists, or "".
func chromiumPath() string {
	for _, p := range chromiumPaths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// browser gives the test a fresh, isolated browser context (its own
// cookies, storage and cache) in one headless Chromium shared by the tests
// of this package, started on first use (a launch per test cost about a
// second each). It skips the test where Chromium is missing, except under
// CI=true, where that is a failure. The context ends after 3 minutes, a
// guard against a hung browser: TestE2EPriorityRequest (13 s on a busy
// machine) once ran out of the former 90 s at a load average of 15.
func browser(t *testing.T) context.Context {
	t.Helper()
	return browserFor(t, 3*time.Minute)
}

// browserFor is browser with the context's whole life bounded by limit, or
// unbounded when 0 (a page sweep bounds each page instead: see checkPages).
func browserFor(t *testing.T, limit time.Duration) context.Context {
	t.Helper()
	if chromiumPath() == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Chromium is required under CI=true: none of %v exists", chromiumPaths)
		}
		t.Skipf("no Chromium: none of %v exists", chromiumPaths)
	}
	shared := sharedChromium()
	if shared.err != nil {
		t.Fatalf("start Chromium: %v", shared.err)
	}
	ctx, cancelCtx := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	cancelTimeout := context.CancelFunc(func() {})
	if limit > 0 {
		ctx, cancelTimeout = context.WithTimeout(ctx, limit)
	}
	t.Cleanup(func() { cancelTimeout(); cancelCtx() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatalf("open a browser context: %v", err)
	}
	// chromedp enables the Network and CSS domains on every tab; no test
	// reads their events, and reporting every request and style sheet to
	// us cost Chromium 5–10 % of its CPU in the browser tests (measured).
	// A resource that fails still shows in the console (the Log domain).
	for _, off := range []cdp.Command[cdp.Empty, cdp.Empty]{network.Disable, css.Disable} {
		if _, err := chromedp.Call(ctx, off, cdp.Empty{}); err != nil {
			t.Fatalf("open a browser context: %v", err)
		}
	}
	// It also has every tab discover targets: each tab is then told of
	// every other test's tabs and of their navigations. No test opens a
	// second tab or window; without it the browser tests cost the machine
	// 4 % less CPU (three paired runs of -run E2E: 34.6, 34.1, 37.2 s →
	// 33.0, 31.9, 36.6 s).
	if _, err := chromedp.Call(ctx, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: false}); err != nil {
		t.Fatalf("open a browser context: %v", err)
	}
	return ctx
}

// stepTimeout bounds each step of doSteps.
const stepTimeout = 45 * time.Second

// doSteps runs steps in order, as chromedp.Do does, but each within
// stepTimeout, and on a failure names the step and what the page showed
// then: a step that waits for an element that never comes fails after its
// own timeout while the test's browser context still lives to be asked
// (with chromedp.Do the context's own deadline ended it, and nothing could
// be asked any more).
func doSteps(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	for i, s := range steps {
		sctx, cancel := context.WithTimeout(ctx, stepTimeout)
		_, err := chromedp.Run(sctx, s)
		cancel()
		if err != nil {
			page, perr := chromedp.Run(ctx, chromedp.Evaluate[string](
				`location.pathname + location.search + " (" + document.readyState + ")\n" + (document.querySelector("main")?.innerText ?? "")`))
			if perr != nil {
				page = "(not readable: " + perr.Error() + ")"
			}
			return fmt.Errorf("step %d of %d: %w\npage: %s", i+1, len(steps), err, page)
		}
	}
	return nil
}

// sharedBrowser is the package's one browser process; TestMain ends it.
type sharedBrowser struct {
	once    sync.Once
	ctx     context.Context // the browser's first context; tests open theirs under it
	err     error
	dataDir string
	stop    func()
}

var chromium sharedBrowser

func sharedChromium() *sharedBrowser {
	chromium.once.Do(func() {
		chromium.stop = func() {}
		if chromium.dataDir, chromium.err = os.MkdirTemp("", "gpubook-chromium-"); chromium.err != nil {
			return
		}
		// chromedp's defaults (Puppeteer's) first: above all, windows of
		// other tests' contexts are not put in the background (no timer
		// throttling, no renderer backgrounding), the renderer does not
		// rely on a small /dev/shm, and no repost prompt can block a page.
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath()),
			chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-component-update", true),
			// No spare renderer: Chromium keeps a renderer process
			// started ahead for the next navigation and, each time a
			// navigation takes it, starts another; a page sweep started
			// 56–67 renderers for its 56 pages, without it 12. The
			// browser tests (-run 'E2E|Pages', three paired runs) cost
			// the machine 59.6, 59.1, 57.4 s of CPU with it, 51.9,
			// 56.1, 51.5 s without. (chromedp's own list disables the
			// first two.)
			chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,SpareRendererForSitePerProcess"),
			chromedp.UserDataDir(chromium.dataDir), chromedp.WindowSize(1400, 900))
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelBrowser := chromedp.NewContext(actx)
		chromium.ctx = bctx
		chromium.stop = func() { cancelBrowser(); cancelAlloc() }
		chromium.err = chromedp.Do(bctx) // launches the browser
	})
	return &chromium
}

// testParallel is how many of this package's tests run at once unless
// -parallel says otherwise. Its tests mostly wait (on PostgreSQL, on
// Chromium, on HTTP round trips), not compute: six at a time on a 2-core
// machine took the package from 104 s to 54 s; the default is the number
// of cores.
const testParallel = 6

func TestMain(m *testing.M) {
	unitsandbox.MaybeRun()                  // the shipped-lock test's node commands run as this binary
	code := storetest.Main(m, testParallel) // also drops the test databases in the background
	if chromium.stop != nil {
		chromium.stop()
	}
	if chromium.dataDir != "" {
		os.RemoveAll(chromium.dataDir)
	}
	os.Exit(code)
}

// startE2ECalendar serves the app on a real port, signs Erin in through
// the real OIDC flow (mockoidc) in Chromium and opens the week view.
func startE2ECalendar(t *testing.T) (context.Context, *calFixture, *httptest.Server) {
	t.Helper()
	ctx := browser(t)
	(&consoleErrors{}).listen(t, ctx) // accepts the release's confirmation dialog
	idp := startIdP(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg := idp.Config()
	f := newCalFixture(t, store.SQLite, func(c *web.Config) {
		c.Now, c.BaseURL = time.Now, base
		c.SSO = &handlers.SSOConfig{Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
			Scopes: []string{"openid", "profile", "email", "groups"}, GroupsClaim: "groups", TeamPrefix: "gpu-team-", LeadSuffix: "-leads",
			RedirectURL: base + "/auth/oidc/callback", PostLogout: base + "/"}
	})
	srv := httptest.NewUnstartedServer(f.env.Server.Echo)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	idp.QueueUser(&mockoidc.MockUser{Subject: "erin", Email: "erin@example.org", PreferredUsername: "Erin E2E",
		EmailVerified: true, Groups: []string{"gpu-team-vision"}})
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/login"),
		chromedp.Click(chromedp.CSS(`[data-testid="sso-start"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="whoami"]`)),
		chromedp.Navigate(srv.URL+"/calendar"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="cal-grid"]`)),
	)
	if err != nil {
		t.Fatalf("sign in and open the calendar: %v", err)
	}
	return ctx, f, srv
}

// nowCellJS finds the middle of the column of now in a GPU's row, and the
// width of a column (the week view draws no free cells to aim at).
func nowCellJS(row, row2 int64) string {
	return `(() => {
		const grid = document.querySelector('.cal');
		const slots = grid.dataset.slots.split(',').map(Number), cols = slots.length - 1;
		const now = Date.now() / 1000;
		let c = 0;
		while (c < cols - 1 && slots[c + 1] <= now) c++;
		const row = document.querySelector('[data-testid="cal-row-` + itoa(row) + `"]');
		row.scrollIntoView({block: 'center'});
		const rr = row.getBoundingClientRect(), label = row.querySelector('.gl').getBoundingClientRect().width;
		const w = (rr.width - label) / cols;
		const r2 = document.querySelector('[data-testid="cal-row-` + itoa(row2) + `"]').getBoundingClientRect();
		return {X: rr.left + label + (c + 0.5) * w, Y: rr.top + rr.height / 2, Y2: r2.top + r2.height / 2, Col: w};
	})()`
}

// roomyWeek leaves the browser on a week view with hours whole columns from
// the column of now on, and returns that week's path and the start of the
// column the drags begin in: now's hour, or, in a week's last hours
// (Sunday evening), the next week, whose first column then stands for now
// (nowCellJS finds column 0 when now is before the grid). Without it the
// drags fell off the grid's right edge once an hour a week and more.
func roomyWeek(t *testing.T, ctx context.Context, base string, hours int) (string, time.Time) {
	t.Helper()
	type week struct {
		End  float64 // the grid's last slot boundary, Unix seconds
		Next string  // the next week's path
	}
	hour := time.Now().Truncate(time.Hour)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/calendar"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="cal-grid"]`))); err != nil {
		t.Fatalf("open the week: %v", err)
	}
	w, err := chromedp.Run(ctx, chromedp.Evaluate[week](`(() => {
			const slots = document.querySelector('.cal').dataset.slots.split(',').map(Number);
			return {End: slots[slots.length - 1], Next: document.querySelector('[data-testid="cal-next"]').getAttribute('href')};
		})()`))
	if err != nil {
		t.Fatalf("read the week's end: %v", err)
	}
	end := time.Unix(int64(w.End), 0)
	if !hour.Add(time.Duration(hours) * time.Hour).After(end) {
		return "/calendar", hour
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+w.Next), chromedp.WaitVisible(chromedp.CSS(`[data-testid="cal-grid"]`))); err != nil {
		t.Fatalf("open the next week: %v", err)
	}
	t.Logf("now %s leaves under %d h of this week (ends %s): on %s", time.Now().UTC().Format(time.RFC3339), hours, end.UTC().Format(time.RFC3339), w.Next)
	return w.Next, end
}

// point is a place on the page, from JavaScript.
type point struct {
	X, Y, Y2, Col float64
}

// TestE2EDragToBook signs in through the real OIDC flow (mockoidc in the
// test process), drags across two GPUs of one node on the week view, books
// them, sees the booking, and releases it, in real Chromium.
func TestE2EDragToBook(t *testing.T) {
	t.Parallel() // its own server, fixture and browser context
	ctx, f, srv := startE2ECalendar(t)
	a0, a1 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)
	// Now's column and the next on one week; on next week's the booking
	// has not begun when released, so it is cancelled.
	week, _ := roomyWeek(t, ctx, srv.URL, 2)
	action := "action-release"
	if week != "/calendar" {
		action = "action-cancel"
	}
	// The drag starts in the column of now.
	p, err := chromedp.Run(ctx, chromedp.Evaluate[point](nowCellJS(a0, a1)))
	if err != nil {
		t.Fatalf("find the now cell: %v", err)
	}
	end := p.X + p.Col // two hour columns from the now column
	err = chromedp.Do(ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, p.X, p.Y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, p.X, p.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (p.X+end)/2, p.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, end, p.Y2, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, end, p.Y2, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="booking-form"]`)),
	)
	if err != nil {
		t.Fatalf("drag: %v", err)
	}
	checked, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('input[name=gpu]:checked')].map(e => e.value)`))
	if err != nil || len(checked) != 2 || checked[0] != itoa(a0) || checked[1] != itoa(a1) {
		t.Fatalf("form ticks %v (%v), want GPUs %d and %d", checked, err, a0, a1)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#note"), "dragged in Chromium"),
		chromedp.Click(chromedp.CSS(`[data-testid="booking-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(calMine)),
	)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	// One block per GPU of the booking (the page may still be loading).
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll('`+calMine+`').length === 2`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("my two blocks never showed on the calendar: %v", err)
	}
	bs, err := f.env.DB.Bookings(context.Background(), models.BookingFilter{From: time.Now().Add(-time.Hour)})
	if err != nil || len(bs) != 1 || bs[0].Note != "dragged in Chromium" || len(bs[0].GPUIDs) != 2 {
		t.Fatalf("stored bookings = %+v (%v)", bs, err)
	}
	if d := bs[0].EndsAt.Sub(bs[0].StartsAt); d < time.Hour || d > 2*time.Hour {
		t.Errorf("booked %s, want up to the end of the fourth column", d)
	}
	id := itoa(bs[0].ID)
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/bookings"),
		chromedp.Click(chromedp.CSS(`[data-testid="booking-`+id+`"] [data-testid="`+action+`"]`)),
	)
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	// Released: the row turns past; released within its first second the
	// whole range is freed (cancelled) and the row may leave the list.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const r = document.querySelector('[data-testid="booking-`+id+`"]');
		return r ? ["past", "cancelled"].includes(r.dataset.phase) : !document.querySelector('[data-testid="`+action+`"]'); })()`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
		t.Fatalf("the row never showed the release: %v\n%s", err, html)
	}
	b, err := f.env.DB.Booking(context.Background(), bs[0].ID)
	if err != nil || (action == "action-release" && b.ReleasedAt == nil) || (b.EndsAt.After(time.Now()) && b.Status != models.StatusCancelled) {
		t.Errorf("after %s: %+v (%v)", action, b, err)
	}
	if path := os.Getenv("GPUBOOK_SCREENSHOT"); path != "" {
		screenshot(t, ctx, f, srv.URL, path)
	}
}
