package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestE2ECalendarFitsAt1280x800: with the demo's 24 GPU rows, the week
// and day views are no inner scroll box that hides the last node's rows
// (the page scrolls instead), and neither scrolls sideways at 1280×800,
// the page or the grid (the day view's grid did, by 57 px), in English or
// Chinese.
func TestE2ECalendarFitsAt1280x800(t *testing.T) {
	t.Parallel()
	ctx, f, srv := startE2ECalendar(t)
	f.addNode(t, "node-c", 8, "NVIDIA A100-SXM4-80GB", 81920)
	f.addNode(t, "node-d", 8, "NVIDIA L40S", 46068)
	for _, lang := range []string{"en", "zh-CN"} {
		if lang != "en" {
			err := doSteps(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lang-`+lang+`"]`)),
				chromedp.WaitVisible(chromedp.CSS(`html[lang="`+lang+`"] [data-testid="cal-grid"]`)))
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, view := range []string{"/calendar", "/calendar?view=day"} {
			err := doSteps(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(srv.URL+view),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="cal-grid"]`)))
			if err != nil {
				t.Fatal(err)
			}
			m, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
				const box = document.querySelector('.cal-scroll'), rows = document.querySelectorAll('[data-testid="cal-grid"] .r');
				const last = rows[rows.length - 1].getBoundingClientRect(), b = box.getBoundingClientRect();
				return [document.documentElement.scrollWidth, window.innerWidth, box.scrollHeight, box.clientHeight, last.bottom, b.bottom, rows.length, box.scrollWidth, box.clientWidth];
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: page width %v/%v, grid box %v/%v tall and %v/%v wide, last row ends %v, box ends %v, %v rows", lang, view, m[0], m[1], m[2], m[3], m[7], m[8], m[4], m[5], m[6])
			if m[0] > m[1] {
				t.Errorf("%s %s scrolls the page sideways at 1280 px: scrollWidth %v > innerWidth %v", lang, view, m[0], m[1])
			}
			if m[7] > m[8]+1 {
				t.Errorf("%s %s: the grid scrolls %v px sideways in its box at 1280 px (%v in %v)", lang, view, m[7]-m[8], m[7], m[8])
			}
			if m[2] > m[3]+1 || m[4] > m[5]+1 {
				t.Errorf("%s %s hides rows in an inner scroll box: content %v px in a %v px box, last row ends at %v below the box's %v", lang, view, m[2], m[3], m[4], m[5])
			}
		}
	}
}
