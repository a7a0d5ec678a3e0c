package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func TestBookingFormPrefilled(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	a1, a2 := f.gpu(t, "node-a", 1), f.gpu(t, "node-a", 2)
	c := f.signedIn(f.bob)
	res := c.Get("/bookings/new?gpu=" + itoa(a1) + "&gpu=" + itoa(a2) + "&start=2026-06-03T12:00Z&end=2026-06-03T14:30Z")
	if res.Code != http.StatusOK {
		t.Fatalf("status %d", res.Code)
	}
	doc := res.Doc
	if got := doc.Find(`input[name="gpu"]`).Length(); got != 4 {
		t.Errorf("GPU boxes = %d, want node-a's 4", got)
	}
	for id, want := range map[int64]bool{a1: true, a2: true, f.gpu(t, "node-a", 0): false} {
		if _, got := doc.Find(testid("pick-gpu-" + itoa(id))).Attr("checked"); got != want {
			t.Errorf("GPU %d checked = %v, want %v", id, got, want)
		}
	}
	if v, _ := doc.Find("#starts_at").Attr("value"); v != "2026-06-03T12:00" {
		t.Errorf("start = %q", v)
	}
	if v, _ := doc.Find("#ends_at").Attr("value"); v != "2026-06-03T14:30" {
		t.Errorf("end = %q", v)
	}
	if got := doc.Find(testid("zone-hint")).Text(); !strings.Contains(got, "UTC") {
		t.Errorf("zone hint = %q", got)
	}
	// A cell that began in the past books from now; garbage is dropped.
	doc = c.Get("/bookings/new?gpu=x&start=2026-06-03T10:00Z&end=nonsense").Doc
	if v, _ := doc.Find("#starts_at").Attr("value"); v != "2026-06-03T10:12" {
		t.Errorf("start from the past = %q, want now", v)
	}
	if v, _ := doc.Find("#ends_at").Attr("value"); v != "2026-06-03T11:12" {
		t.Errorf("default end = %q, want an hour later", v)
	}
}

func TestBookingCreate(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			a0, a1 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)
			c := f.signedIn(f.bob)
			c.Get("/bookings/new")
			res := c.Post("/bookings", url.Values{"gpu": {itoa(a0), itoa(a1)}, "starts_at": {"2026-06-03T12:00"}, "duration": {"2.5"}, "note": {"  train  "}})
			if res.Code != http.StatusSeeOther || res.Header().Get("Location") != "/calendar?date=2026-06-03" {
				t.Fatalf("create: %d %s %s", res.Code, res.Header().Get("Location"), res.Body.String())
			}
			cal := c.Get("/calendar?date=2026-06-03")
			if got := cal.Doc.Find(testid("flash")).Text(); !strings.Contains(got, "GPU 0, GPU 1") || !strings.Contains(got, "node-a") {
				t.Errorf("flash = %q", got)
			}
			if got := cal.Doc.Find(calMine).Length(); got != 2 {
				t.Errorf("my blocks after booking = %d, want 2", got)
			}
			bs, _ := f.env.DB.Bookings(t.Context(), models.BookingFilter{UserID: f.bob.ID})
			if len(bs) != 1 || bs[0].Note != "train" || bs[0].EndsAt.Sub(bs[0].StartsAt).Hours() != 2.5 || len(bs[0].GPUIDs) != 2 {
				t.Fatalf("stored = %+v", bs)
			}
			// The next form remembers the note.
			if got := c.Get("/bookings/new").Doc.Find("#note").Text(); got != "train" {
				t.Errorf("next form's note = %q", got)
			}
			// A conflict names the GPU, who and when, and writes nothing.
			alice := f.signedIn(f.alice)
			alice.Get("/bookings/new")
			res = alice.Post("/bookings", url.Values{"gpu": {itoa(a1)}, "starts_at": {"2026-06-03T13:00"}, "ends_at": {"2026-06-03T15:00"}, "note": {"mine"}})
			if res.Code != http.StatusConflict {
				t.Fatalf("conflict status = %d", res.Code)
			}
			if got := res.Doc.Find(testid("conflicts")).Text(); !strings.Contains(got, "GPU 1 is booked by Bob Builder, Wed 3 Jun 12:00–14:30") {
				t.Errorf("conflicts = %q", got)
			}
			if v, _ := res.Doc.Find("#starts_at").Attr("value"); v != "2026-06-03T13:00" || res.Doc.Find("#note").Text() != "mine" {
				t.Errorf("typed values lost: start %q note %q", v, res.Doc.Find("#note").Text())
			}
			if bs, _ := f.env.DB.Bookings(t.Context(), models.BookingFilter{}); len(bs) != 1 {
				t.Errorf("bookings after the conflict = %d, want 1", len(bs))
			}
		})
	}
}

func TestBookingCreateShowsEveryProblem(t *testing.T) {
	t.Parallel()
	for _, lang := range []struct{ header, gpus, start, end string }{
		{"en", "Choose at least one GPU.", "Enter a date and time.", ""},
		{"zh-CN", "", "", ""},
	} {
		t.Run(lang.header, func(t *testing.T) {
			f := newCalFixture(t, store.SQLite)
			c := f.signedIn(f.bob)
			c.Header.Set("Accept-Language", lang.header)
			c.Get("/bookings/new")
			res := c.Post("/bookings", url.Values{"starts_at": {"tomorrow-ish"}, "ends_at": {"2026-06-03T09:00"}, "note": {strings.Repeat("x", 501)}})
			if res.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status = %d", res.Code)
			}
			for _, field := range []string{"gpu_ids", "starts_at", "note"} {
				msg := strings.TrimSpace(res.Doc.Find(testid("error-" + field)).Text())
				if msg == "" {
					t.Errorf("no problem shown for %s", field)
				}
				if lang.header == "zh-CN" && strings.ContainsAny(msg, "abcdefghijklmnopqrstuvwxyz") {
					t.Errorf("%s problem not translated: %q", field, msg)
				}
			}
			if lang.gpus != "" && res.Doc.Find(testid("error-gpu_ids")).Text() != lang.gpus {
				t.Errorf("gpu problem = %q", res.Doc.Find(testid("error-gpu_ids")).Text())
			}
			if v, _ := res.Doc.Find("#starts_at").Attr("value"); v != "tomorrow-ish" {
				t.Errorf("typed start lost: %q", v)
			}
			if bs, _ := f.env.DB.Bookings(t.Context(), models.BookingFilter{}); len(bs) != 0 {
				t.Errorf("bookings = %d, want none", len(bs))
			}
		})
	}
}

func TestBookingCreateRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	c := f.signedIn(f.bob)
	c.Get("/bookings/new")
	a0, b0 := f.gpu(t, "node-a", 0), f.gpu(t, "node-b", 0)
	for name, form := range map[string]url.Values{
		"two nodes":     {"gpu": {itoa(a0), itoa(b0)}, "starts_at": {"2026-06-03T12:00"}, "ends_at": {"2026-06-03T13:00"}},
		"unknown gpu":   {"gpu": {"99999"}, "starts_at": {"2026-06-03T12:00"}, "ends_at": {"2026-06-03T13:00"}},
		"bad gpu id":    {"gpu": {"-1"}, "starts_at": {"2026-06-03T12:00"}, "ends_at": {"2026-06-03T13:00"}},
		"end first":     {"gpu": {itoa(a0)}, "starts_at": {"2026-06-03T12:00"}, "ends_at": {"2026-06-03T11:00"}},
		"bad duration":  {"gpu": {itoa(a0)}, "starts_at": {"2026-06-03T12:00"}, "duration": {"forever"}},
		"too long":      {"gpu": {itoa(a0)}, "starts_at": {"2026-06-03T12:00"}, "duration": {"9999"}},
		"huge time":     {"gpu": {itoa(a0)}, "starts_at": {strings.Repeat("9", 5000)}, "ends_at": {"2026-06-03T13:00"}},
		"in the past":   {"gpu": {itoa(a0)}, "starts_at": {"2026-06-01T12:00"}, "ends_at": {"2026-06-01T13:00"}},
		"nothing given": {},
	} {
		t.Run(name, func(t *testing.T) {
			res := c.Post("/bookings", form)
			if res.Code != http.StatusUnprocessableEntity || res.Doc.Find(`[data-testid^="error-"]`).Length() == 0 {
				t.Errorf("status %d, %d field errors", res.Code, res.Doc.Find(`[data-testid^="error-"]`).Length())
			}
		})
	}
	if bs, _ := f.env.DB.Bookings(t.Context(), models.BookingFilter{}); len(bs) != 0 {
		t.Errorf("bookings = %d, want none", len(bs))
	}
}

// A form body that cannot be parsed is a bad request, not an empty form
// that reports every field missing.
func TestBookingFormUnreadableBody(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	c := f.signedIn(f.bob)
	c.Get("/bookings/new")
	for _, path := range []string{"/bookings", "/bookings/check", "/requests"} {
		t.Run(path, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader("gpu=%zz"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-CSRF-Token", c.CSRF)
			res := c.Do(req)
			if res.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", res.Code, res.Body.String())
			}
			if got := res.Body.String(); !strings.Contains(got, "The request could not be read.") {
				t.Errorf("body lacks the bad-request message: %s", got)
			}
		})
	}
}
