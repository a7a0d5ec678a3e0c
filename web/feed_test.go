package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestFeedDSTWeek reads a user's feed in the week the cluster's zone
// changes to summer time: every event sits at its instant, a booking
// across the change lasts 11 hours, not 12, and the feed follows the
// owner's language.
func TestFeedDSTWeek(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		zone string
		// the Thursday before the change, and the Saturday night booking
		// across it (22:00 to 10:00 local) in UTC, worked out by hand
		thursday         time.Time
		acrossStart, end string
	}{
		{"Europe/Berlin", time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC), "20260328T210000Z", "20260329T080000Z"},
		{"America/New_York", time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC), "20260308T030000Z", "20260308T140000Z"},
	} {
		for _, d := range storetest.Dialects {
			t.Run(tc.zone+"/"+d, func(t *testing.T) {
				t.Parallel()
				zone, err := time.LoadLocation(tc.zone)
				if err != nil {
					t.Fatal(err)
				}
				local := func(day, hour int) time.Time {
					y, m, dd := tc.thursday.Date()
					return time.Date(y, m, dd+day, hour, 0, 0, 0, zone)
				}
				f := newFeedFixture(t, d, zone, local(0, 12))
				alice := f.env.Client()
				alice.SignIn("alice@example.org", "Alice")
				bob := f.env.Client()
				bob.SignIn("bob@example.org", "Bob")
				a, b := f.user(t, "alice@example.org"), f.user(t, "bob@example.org")

				across := f.book(t, a, local(2, 22), local(3, 10), "train llama", f.gpus[0])
				after := f.book(t, a, local(4, 9), local(4, 11), "", f.gpus[0], f.gpus[1])
				gone := f.book(t, a, local(1, 9), local(1, 10), "", f.gpus[1])
				bobs := f.book(t, b, local(2, 22), local(3, 10), "bob's run", f.gpus[1])
				old := f.book(t, a, local(-40, 9), local(-40, 10), "", f.gpus[0])
				res := alice.Post("/bookings/"+itoa(gone.ID)+"/cancel", url.Values{"confirm": {"yes"}})
				if res.Code != http.StatusSeeOther {
					t.Fatalf("cancel: %d %s", res.Code, res.Body.String())
				}
				if got, _ := f.env.DB.Booking(context.Background(), gone.ID); got.Status != models.StatusCancelled {
					t.Fatalf("booking %d not cancelled: %s", gone.ID, got.Status)
				}

				path := makeFeed(t, alice, 0)
				f.now = f.now.Add(time.Hour)
				res, cal := fetchFeed(t, f.env, path)
				if cal == nil {
					t.Fatalf("feed: %d %s", res.Code, res.Body.String())
				}
				body := res.Body.String()
				if strings.Count(body, "\n") != strings.Count(body, "\r\n") || !strings.HasSuffix(body, "END:VCALENDAR\r\n") {
					t.Errorf("feed lines must end in CRLF:\n%q", body)
				}
				for _, want := range []string{"DTSTART:" + tc.acrossStart, "DTEND:" + tc.end} {
					if !strings.Contains(body, want) {
						t.Errorf("feed lacks %s:\n%s", want, body)
					}
				}
				if got := calProp(cal, ics.PropertyXWRCalName); got != "gpubook: my GPU bookings" {
					t.Errorf("calendar name %q", got)
				}
				if got := calProp(cal, ics.PropertyMethod); got != "PUBLISH" {
					t.Errorf("METHOD %q", got)
				}
				evs := eventsByUID(cal)
				if len(evs) != 3 || evs[uid(bobs)] != nil || evs[uid(old)] != nil {
					t.Fatalf("events %v: want Alice's three, not Bob's %d nor the one of 40 days ago %d", eventUIDs(evs), bobs.ID, old.ID)
				}
				for _, bk := range []*models.Booking{across, after, gone} {
					e := evs[uid(bk)]
					if e == nil {
						t.Fatalf("booking %d missing", bk.ID)
					}
					start, err1 := e.GetStartAt()
					end, err2 := e.GetEndAt()
					if err1 != nil || err2 != nil || !start.Equal(bk.StartsAt) || !end.Equal(bk.EndsAt) {
						t.Errorf("booking %d at %v–%v (%v %v), want %v–%v", bk.ID, start, end, err1, err2, bk.StartsAt, bk.EndsAt)
					}
					stamp, err := e.GetDtStampTime()
					if err != nil || !stamp.Equal(f.now.Truncate(time.Second)) {
						t.Errorf("DTSTAMP %v %v, want %v", stamp, err, f.now)
					}
					mod, err := e.GetLastModifiedAt()
					stored, _ := f.env.DB.Booking(context.Background(), bk.ID)
					if err != nil || !mod.Equal(stored.UpdatedAt) {
						t.Errorf("LAST-MODIFIED %v %v, want %v", mod, err, stored.UpdatedAt)
					}
				}
				if s, _ := evs[uid(across)].GetStartAt(); s.Add(11*time.Hour) != func() time.Time { e, _ := evs[uid(across)].GetEndAt(); return e }() {
					t.Error("the booking across the change does not last 11 hours")
				}
				e := evs[uid(across)]
				link := feedBase + "/bookings?show=all#booking-" + itoa(across.ID)
				for p, want := range map[ics.ComponentProperty]string{
					ics.ComponentPropertySummary:  "1 × NVIDIA A100 on node-a",
					ics.ComponentPropertyStatus:   "CONFIRMED",
					ics.ComponentPropertySequence: "0",
					ics.ComponentPropertyUrl:      link,
					ics.ComponentPropertyLocation: "node-a",
					ics.ComponentPropertyTransp:   "TRANSPARENT",
					ics.ComponentPropertyDescription: "GPUs: #0 NVIDIA A100\nNode: node-a\nNote: train llama\nStatus: confirmed\n" +
						"Open in gpubook: " + link,
				} {
					if got := prop(e, p); got != want {
						t.Errorf("%s = %q, want %q", p, got, want)
					}
				}
				if got := prop(evs[uid(after)], ics.ComponentPropertySummary); got != "2 × NVIDIA A100 on node-a" {
					t.Errorf("two-GPU summary %q", got)
				}
				c := evs[uid(gone)]
				if prop(c, ics.ComponentPropertyStatus) != "CANCELLED" || prop(c, ics.ComponentPropertySequence) != "1" ||
					prop(c, ics.ComponentPropertySummary) != "Cancelled: 1 × NVIDIA A100 on node-a" ||
					!strings.Contains(prop(c, ics.ComponentPropertyDescription), "Status: cancelled") {
					t.Errorf("cancelled booking: status %q, sequence %q, summary %q, description %q", prop(c, ics.ComponentPropertyStatus),
						prop(c, ics.ComponentPropertySequence), prop(c, ics.ComponentPropertySummary), prop(c, ics.ComponentPropertyDescription))
				}

				// The owner switches to Chinese: the next fetch, with no
				// Accept-Language at all, speaks Chinese; the UIDs stay.
				alice.Get("/profile")
				if res := alice.Post("/profile", url.Values{"language": {"zh-CN"}, "time_zone": {""}}); res.Code != http.StatusSeeOther {
					t.Fatalf("save language: %d", res.Code)
				}
				_, zh := fetchFeed(t, f.env, path)
				zevs := eventsByUID(zh)
				if len(zevs) != 3 || zevs[uid(across)] == nil {
					t.Fatalf("Chinese feed events %v", eventUIDs(zevs))
				}
				if got := calProp(zh, ics.PropertyXWRCalName); got != "gpubook：我的 GPU 预订" {
					t.Errorf("Chinese calendar name %q", got)
				}
				if got := prop(zevs[uid(across)], ics.ComponentPropertySummary); got != "node-a 上的 1 × NVIDIA A100" {
					t.Errorf("Chinese summary %q", got)
				}
				if got := prop(zevs[uid(gone)], ics.ComponentPropertyDescription); !strings.Contains(got, "状态：已取消") || !strings.Contains(got, "节点：node-a") {
					t.Errorf("Chinese description %q", got)
				}
			})
		}
	}
}

func eventUIDs(m map[string]*ics.VEvent) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
