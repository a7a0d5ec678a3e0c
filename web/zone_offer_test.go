package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// A user without a time zone is offered the browser's (the form is filled
// by app.js); accepting stores only the zone, and the offer goes away.
func TestZoneOffer(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			c := f.signedIn(f.bob)
			for _, page := range []string{"/", "/profile"} {
				offer := c.Get(page).Doc.Find(testid("zone-offer"))
				if _, hidden := offer.Attr("hidden"); offer.Length() != 1 || !hidden {
					t.Fatalf("%s: offer = %d (hidden %v), want one, hidden until the script fills it", page, offer.Length(), hidden)
				}
			}
			if res := c.Post("/profile/zone", url.Values{"time_zone": {"Mars/Olympus"}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("a bad zone: %d", res.Code)
			}
			res := c.Post("/profile/zone", url.Values{"time_zone": {"Asia/Tokyo"}, "next": {"/bookings/new"}})
			if res.Code != http.StatusSeeOther || res.Header().Get("Location") != "/bookings/new" {
				t.Fatalf("accept: %d %s", res.Code, res.Header().Get("Location"))
			}
			if res := c.Post("/profile/zone", url.Values{"time_zone": {"Asia/Tokyo"}, "next": {"//evil.example"}}); res.Header().Get("Location") != "/" {
				t.Errorf("next to another site: %s", res.Header().Get("Location"))
			}
			u, err := f.env.DB.UserByEmail(t.Context(), f.bob.Email)
			if err != nil || u.TimeZone != "Asia/Tokyo" || u.Language != f.bob.Language {
				t.Fatalf("stored zone %q language %q (%v)", u.TimeZone, u.Language, err)
			}
			doc := c.Get("/").Doc
			if doc.Find(testid("zone-offer")).Length() != 0 {
				t.Error("offered again after accepting")
			}
			if got := doc.Find("main").Text(); !strings.Contains(got, "Asia/Tokyo (JST)") {
				t.Errorf("home page does not say the times are in Tokyo's zone")
			}
		})
	}
}
