package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// htmxPost is a form post as htmx sends it.
func htmxPost(c *webtest.Client, path string, form url.Values) *webtest.Response {
	form.Set("_csrf", c.CSRF)
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	return c.Do(req)
}

func TestMyBookings(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			a0, a1, a2 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1), f.gpu(t, "node-a", 2)
			active := f.book(t, f.bob, []int64{a0, a1}, -1, 2, "running")
			upcoming := f.book(t, f.bob, []int64{a2}, 5, 7, "later")
			f.book(t, f.alice, []int64{a2}, 8, 9, "alice's")
			c := f.signedIn(f.bob)
			res := c.Get("/bookings")
			if res.Code != http.StatusOK {
				t.Fatalf("status %d", res.Code)
			}
			doc := res.Doc
			row := doc.Find(testid("section-active") + " " + testid("booking-"+itoa(active.ID)))
			if row.Length() != 1 || !strings.Contains(row.Text(), "GPU 0, GPU 1") || row.Find(testid("action-release")).Length() != 1 || row.Find(testid("action-cancel")).Length() != 0 {
				t.Errorf("active row: %q", row.Text())
			}
			row = doc.Find(testid("section-upcoming") + " " + testid("booking-"+itoa(upcoming.ID)))
			if row.Length() != 1 || row.Find(testid("action-cancel")).Length() != 1 {
				t.Errorf("upcoming row: %q", row.Text())
			}
			if doc.Find(`[data-testid^="booking-"]`).Length() != 2 {
				t.Error("someone else's booking is listed")
			}

			// Extend into Alice's booking: refused, with until when it is free.
			res = c.Post("/bookings/"+itoa(upcoming.ID)+"/extend", url.Values{"ends_at": {"2026-06-03T20:00"}})
			if res.Code != http.StatusConflict {
				t.Fatalf("extend conflict status %d", res.Code)
			}
			if got := res.Doc.Find(testid("booking-"+itoa(upcoming.ID)) + " " + testid("row-error")).Text(); !strings.Contains(got, "2026-06-03 18:12 UTC") {
				t.Errorf("extend problem = %q", got)
			}
			res = c.Post("/bookings/"+itoa(upcoming.ID)+"/extend", url.Values{"ends_at": {"2026-06-03T18:12"}})
			if res.Code != http.StatusSeeOther {
				t.Fatalf("extend: %d %s", res.Code, res.Body.String())
			}
			if got := c.Get("/bookings").Doc.Find(testid("flash")).Text(); !strings.Contains(got, "Extended until 2026-06-03 18:12 UTC") {
				t.Errorf("flash = %q", got)
			}

			// htmx: the note and the release answer with the row fragment.
			// The note is judged at the handler's clock (active is long past by the wall clock).
			res = htmxPost(c, "/bookings/"+itoa(active.ID)+"/note", url.Values{"note": {"still running"}})
			if res.Code != http.StatusOK || !strings.HasPrefix(res.Body.String(), `<tr id="booking-`+itoa(active.ID)+`"`) || res.Doc.Find("header.topbar").Length() != 0 {
				t.Fatalf("htmx note: %d %s", res.Code, res.Body.String())
			}
			if v, _ := res.Doc.Find(`input[name="note"]`).Attr("value"); v != "still running" {
				t.Errorf("note = %q", v)
			}
			// The list's release button asks in a dialog, then sends confirm=yes (hx-vals).
			if got, _ := c.Get("/bookings").Doc.Find(testid("booking-"+itoa(active.ID)) + " form:has([data-testid=action-release])").Attr("hx-vals"); got != `{"confirm":"yes"}` {
				t.Errorf("release button hx-vals = %q", got)
			}
			res = htmxPost(c, "/bookings/"+itoa(active.ID)+"/release", url.Values{"confirm": {"yes"}})
			if got := res.Doc.Find(testid("phase")).Text(); res.Code != http.StatusOK || got != "past" {
				t.Errorf("release: %d phase %q", res.Code, got)
			}
			b, _ := f.env.DB.Booking(t.Context(), active.ID)
			if !b.EndsAt.Equal(bookingClock) || b.ReleasedAt == nil {
				t.Errorf("released booking ends %s (released %v), want now", b.EndsAt, b.ReleasedAt)
			}
			// A bad value over htmx: the row with its problem, 422.
			res = htmxPost(c, "/bookings/"+itoa(upcoming.ID)+"/extend", url.Values{"ends_at": {"soon"}})
			if res.Code != http.StatusUnprocessableEntity || res.Doc.Find(testid("row-error")).Text() != "Enter a date and time." {
				t.Errorf("htmx bad extend: %d %q", res.Code, res.Doc.Find(testid("row-error")).Text())
			}
			// Cancel, without htmx: first a confirmation page that changes
			// nothing, then its button: a redirect, and the booking is gone from upcoming.
			res = c.Post("/bookings/"+itoa(upcoming.ID)+"/cancel", nil)
			if res.Code != http.StatusOK || res.Doc.Find(testid("confirm-action")).Length() != 1 {
				t.Fatalf("cancel without confirmation: %d", res.Code)
			}
			if b, _ := f.env.DB.Booking(t.Context(), upcoming.ID); b.Status != models.StatusConfirmed {
				t.Fatalf("asking cancelled the booking: %s", b.Status)
			}
			if v, _ := res.Doc.Find(`[data-testid="confirm-action"] input[name="confirm"]`).Attr("value"); v != "yes" {
				t.Errorf("confirmation form's confirm = %q", v)
			}
			res = c.Post("/bookings/"+itoa(upcoming.ID)+"/cancel", url.Values{"confirm": {"yes"}})
			if res.Code != http.StatusSeeOther {
				t.Fatalf("cancel: %d", res.Code)
			}
			doc = c.Get("/bookings").Doc
			if doc.Find(testid("section-upcoming")+" "+testid("booking-"+itoa(upcoming.ID))).Length() != 0 {
				t.Error("cancelled booking still upcoming")
			}
			if doc.Find(testid("section-past")+" "+testid("booking-"+itoa(active.ID))).Length() != 1 {
				t.Error("released booking not in the past list")
			}
			audit, _ := f.env.DB.AuditEvents(t.Context(), models.AuditFilter{})
			if len(audit) < 5 {
				t.Errorf("audit events = %d, want create×3, extend, note, release, cancel", len(audit))
			}
		})
	}
}

func TestBookingActionsRefused(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	c := f.signedIn(f.bob)
	theirs := f.book(t, f.alice, []int64{f.gpu(t, "node-a", 0)}, 2, 3, "")
	mine := f.book(t, f.bob, []int64{f.gpu(t, "node-a", 1)}, -1, 1, "")
	c.Get("/bookings")
	for _, tt := range []struct {
		path string
		want int
	}{
		{"/bookings/" + itoa(theirs.ID) + "/cancel", http.StatusForbidden},
		{"/bookings/99999/release", http.StatusNotFound},
		{"/bookings/abc/release", http.StatusNotFound},
		{"/bookings/" + itoa(mine.ID) + "/cancel", http.StatusUnprocessableEntity}, // started: release instead
	} {
		if res := c.Post(tt.path, url.Values{}); res.Code != tt.want {
			t.Errorf("%s = %d, want %d", tt.path, res.Code, tt.want)
		}
	}
	if res := c.Post("/bookings/"+itoa(mine.ID)+"/release", url.Values{"_csrf": {"forged"}}); res.Code != http.StatusForbidden {
		t.Errorf("forged CSRF = %d, want 403", res.Code)
	}
}

func TestPastBookingsPaging(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	f.book(t, f.bob, []int64{f.gpu(t, "node-a", 0)}, -24*40, -24*40+1, "long ago")
	f.book(t, f.bob, []int64{f.gpu(t, "node-a", 0)}, -48, -47, "recent")
	c := f.signedIn(f.bob)
	*f.now = bookingClock
	doc := c.Get("/bookings").Doc
	if got := doc.Find(testid("section-past")).Text(); !strings.Contains(got, "recent") || strings.Contains(got, "long ago") {
		t.Errorf("page 0 = %q", got)
	}
	doc = c.Get("/bookings?page=1").Doc
	if got := doc.Find(testid("section-past")).Text(); !strings.Contains(got, "long ago") || strings.Contains(got, "recent") {
		t.Errorf("page 1 = %q", got)
	}
	if doc.Find(testid("past-newer")).Length() != 1 {
		t.Error("no link back to newer")
	}
}

func TestFindSlotsPage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			c := f.signedIn(f.bob)
			if res := c.Get("/slots"); res.Code != http.StatusOK || res.Doc.Find(testid("slots-form")).Length() != 1 {
				t.Fatalf("form: %d", res.Code)
			}
			res := c.Get("/slots?gpus=2&hours=3&model=NVIDIA+H100+80GB+HBM3&after=2026-06-04T09:00")
			if res.Code != http.StatusOK {
				t.Fatalf("search: %d %s", res.Code, res.Body.String())
			}
			opts := res.Doc.Find(`[data-testid^="slot-"]` + " form")
			if opts.Length() == 0 || opts.Length() > 3 {
				t.Fatalf("options = %d", opts.Length())
			}
			form := url.Values{}
			opts.First().Find("input").Each(func(_ int, s *goquery.Selection) {
				form.Add(s.AttrOr("name", ""), s.AttrOr("value", ""))
			})
			if len(form["gpu"]) != 2 || form.Get("starts_at") != "2026-06-04T09:00:00Z" || form.Get("_csrf") == "" {
				t.Errorf("first option posts %v", form)
			}
			if res := c.Post("/bookings", form); res.Code != http.StatusSeeOther {
				t.Errorf("one-click book = %d %s", res.Code, res.Body.String())
			}
			// Too long a search says the most there is.
			if got := c.Get("/slots?gpus=1&hours=99999").Doc.Find(testid("error-hours")).Text(); got != "At most 336 hours." {
				t.Errorf("hours=99999 says %q", got)
			}
			c.Header.Set("Accept-Language", "zh-CN")
			res = c.Get("/slots?gpus=zero&hours=-1")
			if res.Code != http.StatusUnprocessableEntity || res.Doc.Find(testid("error-gpus")).Length() != 1 || res.Doc.Find(testid("error-hours")).Length() != 1 {
				t.Errorf("bad query: %d", res.Code)
			}
		})
	}
}

func TestGPUPage(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	g := f.gpu(t, "node-a", 0)
	f.book(t, f.alice, []int64{g}, -1, 1, "holding it")
	next := f.book(t, f.bob, []int64{g}, 2, 3, "next up")
	c := f.signedIn(f.bob)
	res := c.Get("/gpus/" + itoa(g))
	if res.Code != http.StatusOK {
		t.Fatalf("status %d", res.Code)
	}
	if got := res.Doc.Find(testid("gpu-holder")).Text(); !strings.Contains(got, "Held by Alice Admin until 2026-06-03 11:12 UTC") || !strings.Contains(got, "holding it") {
		t.Errorf("holder = %q", got)
	}
	if res.Doc.Find(testid("gpu-booking-"+itoa(next.ID))).Length() != 1 {
		t.Error("upcoming booking missing")
	}
	*f.now = bookingClock.Add(5 * time.Hour)
	if got := c.Get("/gpus/" + itoa(g)).Doc.Find(testid("gpu-holder")).Text(); !strings.Contains(got, "Free right now") {
		t.Errorf("holder later = %q", got)
	}
	if res := c.Get("/gpus/424242"); res.Code != http.StatusNotFound {
		t.Errorf("unknown GPU = %d", res.Code)
	}
}
