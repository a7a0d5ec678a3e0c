package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/gpubook/gpubook/models"
)

// TestE2EWeekFitsAndDragStopsAtTaken checks in real Chromium that the week
// view fits a 1280×800 window (no page scroll sideways, Sunday in view),
// that a drag along a row stops at someone else's booking, that a drag
// down onto a GPU whose range is taken turns red and books nothing, and
// saves screenshots at 1280×800 and 390×844 in both languages (to
// GPUBOOK_ARTEFACTS, or the test's temporary folder).
func TestE2EWeekFitsAndDragStopsAtTaken(t *testing.T) {
	t.Parallel() // its own server, fixture and browser context
	ctx, f, srv := startE2ECalendar(t)
	a0, a1 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	week, hour := roomyWeek(t, ctx, srv.URL, 5) // the wall below ends 5 h on
	taken := func(gpu int64, from, to int) *models.Booking {
		b, err := f.env.DB.CreateBooking(context.Background(), models.NewBooking{UserID: f.bob.ID, GPUIDs: []int64{gpu},
			StartsAt: hour.Add(time.Duration(from) * time.Hour), EndsAt: hour.Add(time.Duration(to) * time.Hour), Note: "taken"},
			models.DefaultBookingLimits, time.Now(), models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	wall := taken(a0, 3, 5) // along GPU 0, three columns after now's
	taken(a1, 1, 2)         // on GPU 1, right after now's column
	err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+week),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="cal-grid"]`)))
	if err != nil {
		t.Fatal(err)
	}
	fit, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
		const days = document.querySelectorAll('[data-testid="cal-day"]');
		const sun = days[6].getBoundingClientRect(), box = document.querySelector('.cal-scroll').getBoundingClientRect();
		return [document.documentElement.scrollWidth, window.innerWidth, sun.left, sun.right, box.right, days.length];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if fit[0] > fit[1] {
		t.Errorf("page scrolls sideways at 1280 px: scrollWidth %v > innerWidth %v", fit[0], fit[1])
	}
	if fit[5] != 7 || fit[3] > fit[4]+1 || fit[3] > fit[1] {
		t.Errorf("Sunday's header spans %v–%v, the grid's box ends at %v (window %v): Sunday is not in view", fit[2], fit[3], fit[4], fit[1])
	}

	// Along GPU 0: from now's column to far past the booking 3 h later.
	p, err := chromedp.Run(ctx, chromedp.Evaluate[point](nowCellJS(a0, a1)))
	if err != nil {
		t.Fatal(err)
	}
	far := p.X + 8*p.Col
	err = chromedp.Do(ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, p.X, p.Y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, p.X, p.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (p.X+far)/2, p.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, far, p.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, far, p.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="booking-form"]`)),
	)
	if err != nil {
		t.Fatalf("drag along GPU 0: %v", err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`))
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.ParseQuery(strings.TrimPrefix(loc, "?"))
	end, err := time.Parse("2006-01-02T15:04Z", q.Get("end"))
	if err != nil || end.After(wall.StartsAt) || q["gpu"][0] != itoa(a0) {
		t.Errorf("the drag crossed the booking at %s: form %s (%v)", wall.StartsAt.UTC().Format(time.RFC3339), loc, err)
	}

	// Down onto GPU 1, whose next hour is taken: red, and no form.
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+week), chromedp.WaitVisible(chromedp.CSS(`[data-testid="cal-grid"]`)))
	if err != nil {
		t.Fatal(err)
	}
	p, err = chromedp.Run(ctx, chromedp.Evaluate[point](nowCellJS(a0, a1)))
	if err != nil {
		t.Fatal(err)
	}
	end2 := p.X + 2*p.Col
	err = chromedp.Do(ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, p.X, p.Y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, p.X, p.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, end2, p.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, end2, p.Y2, chromedp.ButtonLeft),
	)
	if err != nil {
		t.Fatal(err)
	}
	red, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.sel-box.bad').length`))
	if err != nil || red != 2 {
		t.Errorf("selection over a taken cell: %d red boxes (%v), want 2", red, err)
	}
	err = chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, end2, p.Y2, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.Sleep(700*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	after, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[location.pathname, !document.querySelector('[data-testid="cal-msg"]').hidden]`))
	if err != nil || after[0] != "/calendar" || after[1] != true {
		t.Errorf("after releasing a taken range: %v (%v), want still on /calendar with the message shown", after, err)
	}
	calendarScreenshots(t, ctx, srv.URL)
}

// calendarScreenshots checks that the week view shows its grid at a
// desktop and a phone size in both languages, and keeps a screenshot of
// each when GPUBOOK_ARTEFACTS is set.
func calendarScreenshots(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	dir := artefactDir(t)
	for _, lang := range []string{"en", "zh-CN"} {
		steps := []chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base + "/calendar")}
		if lang != "en" { // the footer offers only the other language
			steps = append(steps, chromedp.Click(chromedp.CSS(`[data-testid="lang-`+lang+`"]`)))
		}
		steps = append(steps, chromedp.WaitVisible(chromedp.CSS(`html[lang="`+lang+`"] [data-testid="cal-grid"]`)))
		err := chromedp.Do(ctx, steps...)
		if err != nil {
			t.Fatalf("calendar in %s: %v", lang, err)
		}
		for _, size := range [][2]int64{{1280, 800}, {390, 844}} {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(size[0], size[1]), chromedp.Sleep(200*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			vis, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const r = document.querySelector('[data-testid="cal-grid"]').getBoundingClientRect(); return r.width > 0 && r.top < innerHeight; })()`))
			if err != nil || !vis {
				t.Errorf("%s at %dx%d: grid not in view (%v)", lang, size[0], size[1], err)
			}
			keepScreenshot(t, ctx, dir, fmt.Sprintf("calendar-week-%s-%dx%d.png", lang, size[0], size[1]))
		}
	}
}
