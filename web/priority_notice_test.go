package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/views/i18n"
)

// Reminders can be turned off on the profile page; a conflict offers
// "notify me when this frees", and the watcher is told after a cancel, in
// their language.
func TestRemindersAndWatch(t *testing.T) {
	t.Parallel()
	f := newPrioWeb(t, "sqlite")
	ctx := context.Background()
	bob := f.signedIn(f.bob)
	page := bob.Get("/profile")
	if _, on := page.Doc.Find(testid("notify-reminders")).Attr("checked"); !on {
		t.Error("reminders are off by default")
	}
	if res := bob.Post("/profile/reminders", url.Values{}); res.Code != http.StatusSeeOther {
		t.Fatalf("save reminders: %d", res.Code)
	}
	if on, _ := f.env.DB.NotifyReminders(ctx, f.bob.ID); on {
		t.Error("reminders still on after unticking")
	}
	if _, on := bob.Get("/profile").Doc.Find(testid("notify-reminders")).Attr("checked"); on {
		t.Error("checkbox still ticked")
	}
	held := f.book(t, f.carol, []int64{f.gpu(t, "node-b", 0)}, 1, 3, "")
	form := url.Values{"gpu": {itoa(f.gpu(t, "node-b", 0))}, "starts_at": {"2026-06-03T12:00"}, "ends_at": {"2026-06-03T13:00"}}
	bob.Get("/bookings/new")
	conflict := bob.Post("/bookings", form)
	if conflict.Code != http.StatusConflict || conflict.Doc.Find(testid("watch-form")).Length() != 1 {
		t.Fatalf("conflict page: %d, watch form %d", conflict.Code, conflict.Doc.Find(testid("watch-form")).Length())
	}
	if res := bob.Post("/watches", form); res.Code != http.StatusSeeOther {
		t.Fatalf("watch: %d %s", res.Code, res.Body.String())
	}
	if _, err := f.env.DB.CancelBooking(ctx, held.ID, f.carol, bookingClock); err != nil {
		t.Fatal(err)
	}
	p := &handlers.Priority{Base: &handlers.Base{I18n: i18n.MustLoad(), Location: time.UTC}, BaseURL: "https://gpu.example.org"}
	if n, err := f.env.DB.NotifyFreed(ctx, bookingClock, p.Mailer()); err != nil || n != 1 {
		t.Fatalf("notify freed: %d, %v", n, err)
	}
	// Reminders: Erin (zh-CN) has a booking starting in 10 minutes.
	f.book(t, f.erin, []int64{f.gpu(t, "node-a", 3)}, 10.0/60, 2, "")
	if n, err := f.env.DB.SendReminders(ctx, bookingClock, p.Mailer()); err != nil || n != 1 {
		t.Fatalf("reminders: %d, %v", n, err)
	}
	var rows []struct{ ToEmail, Subject, TextBody, HTMLBody string }
	f.env.DB.Gorm.Table("outbox").Select("to_email, subject, text_body, html_body").Where("kind IN ?", []string{"gpu_freed", "reminder_start"}).Order("id").Scan(&rows)
	if len(rows) != 2 {
		t.Fatalf("outbox rows = %+v", rows)
	}
	if r := rows[0]; r.ToEmail != "bob@example.org" || r.Subject != "node-b GPU 0 is free now" || !strings.Contains(r.TextBody, "https://gpu.example.org/bookings/new?gpu=") || !strings.Contains(r.HTMLBody, "Book it") {
		t.Errorf("freed email = %+v", r)
	}
	if r := rows[1]; r.ToEmail != "erin@example.org" || !strings.Contains(r.Subject, "即将") && !strings.Contains(r.Subject, "开始") || !strings.Contains(r.TextBody, "即将开始") {
		t.Errorf("reminder email = %+v", r)
	}
}
