package web_test

import (
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// The pages of a user who never chose a zone are in the zone their
// browser's cookie names; a zone they chose wins; a cookie that names no
// zone leaves the cluster's (UTC here).
func TestBrowserZoneCookie(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	for _, tc := range []struct {
		name, cookie, chosen, want, seen string
	}{
		{"browser's zone", "Asia/Tokyo", "", "Asia/Tokyo (JST)", "Asia/Tokyo"},
		{"no cookie", "", "", "UTC", ""},
		{"not a zone", "../../etc/passwd", "", "UTC", ""},
		{"chosen wins", "Asia/Tokyo", "Europe/Berlin", "Europe/Berlin", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := f.env.DB.UserByEmail(t.Context(), f.bob.Email)
			if err != nil {
				t.Fatal(err)
			}
			u.TimeZone = tc.chosen
			if err := f.env.DB.UpdateUser(t.Context(), u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			c := f.signedIn(f.bob)
			if tc.cookie != "" {
				c.Header.Set("Cookie", "gpubook_tz="+tc.cookie)
			}
			doc := c.Get("/").Doc
			if got := doc.Find("main").Text(); !strings.Contains(got, tc.want) {
				t.Errorf("home does not say its times are in %s:\n%s", tc.want, got)
			}
			seen, _ := doc.Find(testid("zone-offer")).Attr("data-seen")
			if seen != tc.seen {
				t.Errorf("offer's data-seen = %q, want %q", seen, tc.seen)
			}
			if got, err := f.env.DB.UserByEmail(t.Context(), f.bob.Email); err != nil || got.TimeZone != tc.chosen {
				t.Errorf("stored zone %q (%v), want %q: the browser's is never stored", got.TimeZone, err, tc.chosen)
			}
		})
	}
}
