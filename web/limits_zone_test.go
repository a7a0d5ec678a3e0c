package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
)

// TestLimitsInViewersZone: My limits shows peak hours and the week start on
// the viewer's clock with the cluster's beside them, in both languages,
// and only the cluster's when the two zones agree.
func TestLimitsInViewersZone(t *testing.T) {
	t.Parallel()
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d, func(c *web.Config) { c.Location = shanghai })
			bob := *f.bob
			bob.TimeZone = "America/New_York"
			if err := f.env.DB.UpdateUser(t.Context(), &bob, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			c := f.signedIn(&bob)
			text := func(id string) string {
				return strings.Join(strings.Fields(c.Get("/limits").Doc.Find(testid(id)).Text()), " ")
			}
			// Default peak: Mon–Fri 09:00–19:00 in Shanghai is 21:00–07:00
			// the evening before in New York in June (UTC-4).
			tests := []struct{ lang, peak, week string }{
				{"en", "Peak hours are Sun, Mon, Tue, Wed, Thu 21:00–07:00 (next day) in your time zone (America/New_York (EDT)); the cluster sets them as Mon, Tue, Wed, Thu, Fri 09:00–19:00 (Asia/Shanghai).",
					"this week started Sun 31 May 12:00."},
				{"zh-CN", "按您的时区（America/New_York (EDT)），高峰时段为 周日、周一、周二、周三、周四 21:00–07:00（次日）；集群设定为 周一、周二、周三、周四、周五 09:00–19:00（Asia/Shanghai）。",
					"本周始于 5月31日 周日 12:00。"},
			}
			for _, tt := range tests {
				c.Header.Set("Accept-Language", tt.lang)
				if got := text("explain-peak"); !strings.HasPrefix(got, tt.peak) {
					t.Errorf("%s peak:\n got %q\nwant %q…", tt.lang, got, tt.peak)
				}
				if got := text("explain-week"); !strings.Contains(got, tt.week) {
					t.Errorf("%s week: %q lacks %q", tt.lang, got, tt.week)
				}
			}

			// Alice reads on the cluster's clock: one zone, no conversion.
			a := f.signedIn(f.alice)
			got := strings.Join(strings.Fields(a.Get("/limits").Doc.Find(testid("explain-peak")).Text()), " ")
			if want := "Peak hours are Mon, Tue, Wed, Thu, Fri 09:00–19:00 (Asia/Shanghai)."; !strings.HasPrefix(got, want) {
				t.Errorf("same zone: %q, want %q…", got, want)
			}
		})
	}
}
