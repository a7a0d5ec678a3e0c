package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/notify"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

func TestIdleWarningAndOfflineAlerts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		owner := &models.User{Email: "wang@example.org", Name: "王磊", Language: "zh-CN"}
		admin := &models.User{Email: "root@example.org", Name: "Root", IsAdmin: true}
		for _, u := range []*models.User{owner, admin} {
			if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		gpus, _ := models.NewNodeGPUs("gpu01", 2, "NVIDIA L40S", 46068)
		node := &models.Node{Name: "gpu01"}
		if err := db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		clock := now
		n := &notify.Notifier{Store: db, Mail: &views.Mail{I18n: i18n.MustLoad(), BaseURL: "https://gpu.example.org", Location: time.UTC},
			Policy: models.IdlePolicy{AutoRelease: true, Grace: 30 * time.Minute, UtilPct: 5}, Now: func() time.Time { return clock }}

		r := models.IdleReport{ID: 7, NodeName: "gpu01", BookingID: 3, UserID: owner.ID, GPUUUIDs: []string{"GPU-a", "GPU-b"}, IdleSince: now.Add(-40 * time.Minute)}
		for range 2 { // a resend of the same report mails once
			if err := n.IdleWarning(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		m, err := db.OutboxMessageByKey(ctx, "idle:report:7")
		if err != nil {
			t.Fatal(err)
		}
		if m.ToEmail != "wang@example.org" || m.Lang != "zh-CN" || !strings.Contains(m.Subject, "gpu01") || !strings.Contains(m.Subject, "空闲") ||
			!strings.Contains(m.TextBody, "30 分钟") || !strings.Contains(m.HTMLBody, "https://gpu.example.org/bookings#booking-3") {
			t.Errorf("idle warning = %+v", m)
		}
		// The same warning in the app, once, linking to the booking.
		notes, err := db.Notifications(ctx, owner.ID, 10)
		if err != nil || len(notes) != 1 {
			t.Fatalf("in-app idle notices = %+v, %v; want one", notes, err)
		}
		if got := notes[0]; got.Kind != models.NotifyIdle || got.Link != "/bookings?show=all#booking-3" || got.Params["Node"] != "gpu01" ||
			got.Params["AutoRelease"] != "true" || !got.Unread() {
			t.Errorf("in-app idle notice = %+v", got)
		}

		tok, _, err := db.CreateEnrollToken(ctx, node.ID, now, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Enroll(ctx, wire.EnrollRequest{Token: tok, Hostname: "gpu01"}, now); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordHeartbeat(ctx, node.ID, wire.Heartbeat{Node: "gpu01", SentAt: now}, now); err != nil {
			t.Fatal(err)
		}
		count := func() int64 {
			st, err := db.OutboxStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return st.Counts[models.OutboxPending]
		}
		clock = now.Add(time.Minute)
		n.OfflineAlerts(ctx)
		if got := count(); got != 1 {
			t.Fatalf("pending after a 1-minute silence = %d, want only the idle warning", got)
		}
		for _, d := range []time.Duration{3 * time.Minute, 4 * time.Minute, 10 * time.Minute} {
			clock = now.Add(d)
			if err := n.OfflineAlerts(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := count(); got != 2 {
			t.Errorf("pending after a long silence = %d, want the idle warning and one alert to the one admin", got)
		}
	})
}
