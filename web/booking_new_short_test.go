package web_test

import (
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestBookingNewShortCell: the free cell that holds now (10:12) ends at
// the next split, 10:30, which is shorter than a booking may be; the form
// it opens offers 10:12 to 11:00 instead of a range it would refuse.
func TestBookingNewShortCell(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		f := newCalFixture(t, d)
		c := f.signedIn(f.bob)
		res := c.Get("/bookings/new?gpu=" + itoa(f.gpu(t, "node-a", 0)) + "&start=2026-06-03T10:00Z&end=2026-06-03T10:30Z")
		start, _ := res.Doc.Find("#starts_at").Attr("value")
		end, _ := res.Doc.Find("#ends_at").Attr("value")
		if start != "2026-06-03T10:12" || end != "2026-06-03T11:00" {
			t.Errorf("%s: form range %s – %s, want 2026-06-03T10:12 – 2026-06-03T11:00", d, start, end)
		}
	}
}
