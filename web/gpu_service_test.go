package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestGPUOutOfServiceWithCare: taking node-a GPU 0 out of service with two
// bookings on it first shows them to the admin; Erin's, with GPU 1 free,
// is offered a move, Dan's, with GPU 1 busy then and 2 and 3 out too, only a
// cancellation. Confirmed, Erin's booking runs on GPU 1, Dan's is
// cancelled, and both are told in the app (each in their language) and by
// email, with the reason.
func TestGPUOutOfServiceWithCare(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			ctx := context.Background()
			g0, g1 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)
			erins := f.book(t, f.erin, []int64{g0}, 1, 3, "")
			dans := f.book(t, f.dan, []int64{g0}, 4, 6, "")
			for _, i := range []int{2, 3} { // only GPU 1 is left to move to
				if err := f.env.DB.SetGPUService(ctx, f.gpu(t, "node-a", i), false, "spare", models.CLIActor); err != nil {
					t.Fatal(err)
				}
			}
			f.book(t, f.bob, []int64{g1}, 3.5, 7, "")
			alice := f.signedIn(f.alice)
			path := "/admin/gpus/" + itoa(g0) + "/service"
			form := url.Values{"in_service": {"false"}, "reason": {"fan failure"}}
			page := alice.Post(path, form)
			if page.Code != http.StatusOK || page.Doc.Find(testid("gpu-service")).Length() != 1 {
				t.Fatalf("confirmation page: %d\n%s", page.Code, page.Body.String())
			}
			if g, _ := f.env.DB.GPU(ctx, g0); !g.InService {
				t.Fatal("the first post took the GPU out of service before the admin confirmed")
			}
			erinRow, danRow := page.Doc.Find(testid("service-row-"+itoa(erins.ID))), page.Doc.Find(testid("service-row-"+itoa(dans.ID)))
			if erinRow.Find(testid("choice-move")).Length() != 1 || !strings.Contains(erinRow.Text(), "Move to GPU 1") {
				t.Errorf("Erin's row offers no move to GPU 1: %q", erinRow.Text())
			}
			if danRow.Find(testid("choice-move")).Length() != 0 || danRow.Find(testid("no-move")).Length() != 1 {
				t.Errorf("Dan's row offers a move: %q", danRow.Text())
			}
			form.Set("confirm", "1")
			form.Set("action_"+itoa(erins.ID), models.ServiceMove)
			form.Set("action_"+itoa(dans.ID), models.ServiceCancel)
			if res := alice.Post(path, form); res.Code != http.StatusSeeOther {
				t.Fatalf("confirm: %d %s", res.Code, res.Body.String())
			}
			if g, _ := f.env.DB.GPU(ctx, g0); g.InService || g.OutOfServiceReason != "fan failure" {
				t.Errorf("GPU after confirm: in service %v, reason %q", g.InService, g.OutOfServiceReason)
			}
			if b, _ := f.env.DB.Booking(ctx, erins.ID); !slices.Equal(b.GPUIDs, []int64{g1}) || b.Status != models.StatusConfirmed {
				t.Errorf("Erin's booking: GPUs %v, status %s; want moved to GPU 1", b.GPUIDs, b.Status)
			}
			if b, _ := f.env.DB.Booking(ctx, dans.ID); b.Status != models.StatusCancelled {
				t.Errorf("Dan's booking status = %s, want cancelled", b.Status)
			}
			want := map[*models.User]string{
				f.erin: "node-a GPU 0 已停止服务（fan failure）：您的预订 #" + itoa(erins.ID) + " 已移到 node-a GPU 1。",
				f.dan:  "node-a GPU 0 was taken out of service (fan failure): your booking #" + itoa(dans.ID) + " was cancelled.",
			}
			for u, text := range want {
				c := f.signedIn(u)
				if got := unreadCount(c); got != "1" {
					t.Errorf("%s: bell = %q, want 1", u.Name, got)
				}
				if got := strings.TrimSpace(c.Get("/notifications").Doc.Find(testid("notice-text")).Text()); got != text {
					t.Errorf("%s: notice = %q, want %q", u.Name, got, text)
				}
			}
			// Dan finds the cancelled booking under "cancelled", with who and why.
			cancelled := f.signedIn(f.dan).Get("/bookings?show=cancelled")
			row := cancelled.Doc.Find(testid("section-cancelled") + " " + testid("booking-"+itoa(dans.ID)))
			if got := row.Find(testid("history")).Text(); !strings.Contains(got, "by alice@example.org: its GPU was taken out of service (fan failure).") {
				t.Errorf("Dan's cancelled booking history = %q\n%s", got, cancelled.Body.String())
			}
			if cancelled.Doc.Find(testid("section-upcoming")).Length() != 0 {
				t.Error("the cancelled filter also shows upcoming bookings")
			}
			upcoming := f.signedIn(f.erin).Get("/bookings?show=upcoming")
			if got := upcoming.Doc.Find(testid("booking-"+itoa(erins.ID)) + " " + testid("history")).Text(); !strings.Contains(got, "由 alice@example.org 移走：原 GPU 已停止服务（fan failure）。") {
				t.Errorf("Erin's moved booking history = %q", got)
			}
			for _, b := range []*models.Booking{erins, dans} {
				m, err := f.env.DB.OutboxMessageByKey(ctx, "service:booking:"+itoa(b.ID)+":"+itoa(f.now.Unix()))
				if err != nil || !strings.Contains(m.TextBody, "fan failure") || !strings.Contains(m.TextBody, "/bookings?show=all#booking-"+itoa(b.ID)) {
					t.Errorf("email for booking %d: %v %+v", b.ID, err, m)
				}
			}
		})
	}
}
