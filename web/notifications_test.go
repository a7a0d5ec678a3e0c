package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// preemptedNoticeText is what the notice for p says, in English or Chinese.
func preemptedNoticeText(p models.Preemption, reqID int64, zh bool) string {
	b, r, h := itoa(p.Booking.ID), itoa(reqID), p.LostGPUHours()
	en := map[string]string{
		models.GiveWayMove:   "Your booking #" + b + " was moved to other GPUs to make room for priority request #" + r + "; it lost " + h + " GPU-hours.",
		models.GiveWaySplit:  "Your booking #" + b + " was shortened or split to make room for priority request #" + r + "; it lost " + h + " GPU-hours.",
		models.GiveWayCancel: "Your booking #" + b + " was cancelled to make room for priority request #" + r + "; it lost " + h + " GPU-hours.",
	}
	cn := map[string]string{
		models.GiveWayMove:   "为给优先申请 #" + r + " 腾出位置，您的预订 #" + b + " 已被移到其他 GPU；损失 " + h + " GPU 小时。",
		models.GiveWaySplit:  "为给优先申请 #" + r + " 腾出位置，您的预订 #" + b + " 已被缩短或拆分；损失 " + h + " GPU 小时。",
		models.GiveWayCancel: "为给优先申请 #" + r + " 腾出位置，您的预订 #" + b + " 已被取消；损失 " + h + " GPU 小时。",
	}
	if zh {
		return cn[p.Action]
	}
	return en[p.Action]
}

// approvePreempting files Bob's pre-empting request over GPUs 0 and 1 of
// node-a (hours 2 to 5) with Erin (zh-CN) and Dan in the way, has Carol
// approve it through the page, and returns the plan that was applied.
func approvePreempting(t *testing.T, f *prioWeb) (*models.PriorityRequest, []models.Preemption) {
	t.Helper()
	ctx := context.Background()
	f.book(t, f.erin, []int64{f.gpu(t, "node-a", 0)}, 1, 4, "")
	f.book(t, f.dan, []int64{f.gpu(t, "node-a", 1)}, 3, 7, "")
	r := &models.PriorityRequest{UserID: f.bob.ID, GPUIDs: []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)},
		StartsAt: f.now.Add(2 * time.Hour), EndsAt: f.now.Add(5 * time.Hour), Purpose: "p", Urgency: "u", Plan: "p", GiveBack: "g", Preempt: true}
	if err := f.env.DB.CreateRequest(ctx, r, models.DefaultBookingLimits, *f.now, models.CLIActor, nil); err != nil {
		t.Fatal(err)
	}
	plan, err := f.env.DB.PreemptionPlan(ctx, r.ID, *f.now)
	if err != nil || len(plan) != 2 {
		t.Fatalf("plan = %+v, %v; want two bookings in the way", plan, err)
	}
	reqPath := "/requests/" + itoa(r.ID)
	carol := f.signedIn(f.carol)
	fp, _ := carol.Get(reqPath).Doc.Find(`input[name="plan"]`).Attr("value")
	if res := carol.Post(reqPath+"/approve", url.Values{"plan": {fp}}); res.Code != http.StatusSeeOther {
		t.Fatalf("approve: %d %s", res.Code, res.Body.String())
	}
	return r, plan
}

func unreadCount(c *webtest.Client) string {
	return strings.TrimSpace(c.Get("/calendar").Doc.Find(testid("unread-count")).Text())
}

// TestPreemptionNotices: approving a pre-empting request leaves each owner
// in the way an in-app notice, in their language, with the lost GPU-hours
// and a link to the booking; the bell counts it; mark read and mark all
// read clear it; nobody marks another's notice.
func TestPreemptionNotices(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			r, plan := approvePreempting(t, f)
			for _, p := range plan {
				owner := map[int64]*models.User{f.erin.ID: f.erin, f.dan.ID: f.dan}[p.Booking.UserID]
				c := f.signedIn(owner)
				if got := unreadCount(c); got != "1" {
					t.Errorf("%s: bell = %q, want 1", owner.Name, got)
				}
				page := c.Get("/notifications")
				items := page.Doc.Find(`[data-testid^="notification-"]`)
				if items.Length() != 1 {
					t.Fatalf("%s: %d notices, want 1\n%s", owner.Name, items.Length(), page.Body.String())
				}
				want := preemptedNoticeText(p, r.ID, owner.Language == "zh-CN")
				if got := strings.TrimSpace(items.Find(testid("notice-text")).Text()); got != want {
					t.Errorf("%s: notice = %q, want %q", owner.Name, got, want)
				}
				if link, _ := items.Find(testid("notice-link")).Attr("href"); link != "/bookings?show=all#booking-"+itoa(p.Booking.ID) {
					t.Errorf("%s: link = %q", owner.Name, link)
				}
				id, _ := items.Attr("data-testid")
				readPath := "/notifications/" + strings.TrimPrefix(id, "notification-") + "/read"
				if res := f.signedIn(f.bob).Post(readPath, nil); res.Code != http.StatusNotFound {
					t.Errorf("Bob marks %s's notice: %d, want 404", owner.Name, res.Code)
				}
				if res := c.Post(readPath, nil); res.Code != http.StatusSeeOther {
					t.Fatalf("mark read: %d", res.Code)
				}
				if got := unreadCount(c); got != "" {
					t.Errorf("%s: bell after mark read = %q, want none", owner.Name, got)
				}
				if got, _ := c.Get("/notifications").Doc.Find(`[data-testid^="notification-"]`).Attr("data-unread"); got != "false" {
					t.Errorf("%s: notice still unread: %q", owner.Name, got)
				}
			}
			bob := f.signedIn(f.bob)
			if got := strings.TrimSpace(bob.Get("/notifications").Doc.Find(testid("notice-text")).Text()); got != "Your priority request #"+itoa(r.ID)+" was approved." {
				t.Errorf("requester's notice = %q", got)
			}
			if res := bob.Post("/notifications/read-all", nil); res.Code != http.StatusSeeOther || unreadCount(bob) != "" {
				t.Errorf("mark all read: %d, bell %q", res.Code, unreadCount(bob))
			}
		})
	}
}
