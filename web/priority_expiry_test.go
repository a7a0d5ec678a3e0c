package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// A pending request expires when its start passes, by the server's clock;
// an admin denies another with a comment.
func TestPriorityExpiryAndDeny(t *testing.T) {
	t.Parallel()
	f := newPrioWeb(t, "sqlite")
	bob := f.signedIn(f.bob)
	bob.Get("/requests/new")
	form := url.Values{"gpu": {itoa(f.gpu(t, "node-b", 0))}, "starts_at": {"2026-06-03T11:00"}, "ends_at": {"2026-06-03T12:00"},
		"purpose": {"p"}, "urgency": {"u"}, "plan": {"pl"}, "give_back": {"g"}}
	first := bob.Post("/requests", form).Header().Get("Location")
	form.Set("starts_at", "2026-06-04T11:00")
	form.Set("ends_at", "2026-06-04T12:00")
	second := bob.Post("/requests", form).Header().Get("Location")
	if first == "" || second == "" {
		t.Fatal("requests not filed")
	}
	*f.now = bookingClock.Add(time.Hour) // 11:12: the first one's start has passed
	carol := f.signedIn(f.carol)
	queue := carol.Get("/approvals")
	if got := queue.Doc.Find(`[data-testid^="request-"][class~="request"]`).Length(); got != 1 {
		t.Errorf("queue shows %d requests, want 1", got)
	}
	if res := carol.Post(first+"/approve", nil); res.Code != http.StatusConflict {
		t.Errorf("approve an expired request: %d", res.Code)
	}
	if got := bob.Get(first).Doc.Find(testid("request-status")).Text(); got != "expired" {
		t.Errorf("first = %q", got)
	}
	admin := f.signedIn(f.alice)
	if res := admin.Post(second+"/deny", url.Values{"comment": {"use the weekend"}}); res.Code != http.StatusSeeOther {
		t.Fatalf("admin denies: %d", res.Code)
	}
	show := bob.Get(second)
	if got := show.Doc.Find(testid("request-status")).Text(); got != "denied" {
		t.Errorf("second = %q", got)
	}
	evs, _ := f.env.DB.AuditEvents(context.Background(), models.AuditFilter{Action: "request."})
	if len(evs) != 4 { // 2 created, 1 expired, 1 denied
		t.Errorf("request audit events = %d, want 4", len(evs))
	}
}
