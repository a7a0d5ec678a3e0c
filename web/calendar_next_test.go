package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestCalendarOffersNextSevenDaysOnSunday: on a Sunday the week view
// offers the seven days from today, which start today and run to Saturday.
func TestCalendarOffersNextSevenDaysOnSunday(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			*f.now = time.Date(2026, 6, 7, 18, 0, 0, 0, time.UTC) // Sunday
			c := f.signedIn(f.bob)
			week := c.Get("/calendar")
			href, ok := week.Doc.Find(testid("cal-next7")).Attr("href")
			if week.Code != http.StatusOK || !ok || href != "/calendar?date=2026-06-07&days=next" {
				t.Fatalf("week view on Sunday: %d, next-7 link %q", week.Code, href)
			}
			next := c.Get(href)
			title := strings.TrimSpace(next.Doc.Find(testid("cal-title")).Text())
			days := next.Doc.Find(testid("cal-day"))
			if next.Code != http.StatusOK || !strings.HasPrefix(title, "7 days from") || days.Length() != 7 ||
				!strings.Contains(days.First().Text(), "7") || next.Doc.Find(testid("cal-next7")).Length() != 0 {
				t.Errorf("next 7 days: %d, title %q, %d days, first %q", next.Code, title, days.Length(), days.First().Text())
			}
			*f.now = time.Date(2026, 6, 8, 9, 0, 0, 0, time.UTC) // Monday: nothing of the week is past
			if n := f.signedIn(f.bob).Get("/calendar").Doc.Find(testid("cal-next7")).Length(); n != 0 {
				t.Errorf("Monday offers next 7 days")
			}
		})
	}
}
