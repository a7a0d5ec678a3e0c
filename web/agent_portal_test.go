package web_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/loginenv"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

func loginVisible(f cache.File, user string, at time.Time) []string {
	return loginenv.Compute(f, user, at, time.UTC).Visible
}

// TestAgentPortalLoginEnvAndViolations: book GPUs 2 and 5 for alice → the
// agent's schedule → `env` for alice lists exactly those UUIDs, bob none;
// after the booking, none; bob running on GPU 1 → a violation in the portal.
func TestAgentPortalLoginEnvAndViolations(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := enrolledE2E(t, d)
			ctx := context.Background()
			alice := x.env.AddUser("alice@example.org", "Alice", false)
			x.env.AddUser("bob@example.org", "Bob", false)
			_, err := x.env.DB.CreateBooking(ctx, models.NewBooking{UserID: alice.ID, GPUIDs: x.gpuIDs(2, 5),
				StartsAt: e2eT0, EndsAt: e2eT0.Add(time.Hour)}, models.DefaultBookingLimits, e2eT0, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			if err := x.d.SyncOnce(ctx); err != nil {
				t.Fatal(err)
			}
			at := e2eT0.Add(30 * time.Minute)
			if got, want := x.env4("alice", at), []string{x.node.UUID(2), x.node.UUID(5)}; !slices.Equal(got, want) {
				t.Errorf("alice: %v, want %v", got, want)
			}
			if got := x.env4("bob", at); len(got) != 0 {
				t.Errorf("bob: %v, want none", got)
			}
			if got := x.env4("alice", e2eT0.Add(time.Hour)); len(got) != 0 {
				t.Errorf("alice after the booking: %v, want none", got)
			}

			x.procs.Add(t, 200, agenttest.UIDBob)
			x.node.Set(1, agenttest.GPUState{Util: 80, UsedMiB: 4000, Procs: []agenttest.Proc{{PID: 200, MemMiB: 4000}}})
			x.run(70 * time.Second)
			vs, err := telemetry.New(x.env.DB).Violations(ctx, models.ViolationFilter{})
			if err != nil || len(vs) != 1 {
				t.Fatalf("violations = %+v, %v; want bob's", vs, err)
			}
			v := vs[0]
			if v.Kind != wire.ViolationUnbooked || v.UserName != "bob" || v.GPUUUID != x.node.UUID(1) || v.GPUIndex != 1 || v.PID != 200 || v.NodeName != "n1" || v.UserID == 0 {
				t.Errorf("violation = %+v", v)
			}
			admin := x.env.Client()
			admin.SignIn("root@example.org", "Root Admin")
			page := admin.Get("/admin/violations")
			if got := page.Doc.Find(`[data-testid="violation-user"]`).Text(); page.Code != 200 || got != "Bob (bob)" {
				t.Errorf("/admin/violations: %d, user %q", page.Code, got)
			}
			bob := x.env.Client()
			bob.SignIn("bob@example.org", "Bob")
			if got := bob.Get("/violations/mine").Doc.Find(`[data-testid="violation-user"]`).Length(); got != 1 {
				t.Errorf("bob's own violations: %d rows, want 1", got)
			}
			status := bob.Get("/status")
			row := status.Doc.Find(`[data-testid="status-gpu-` + itoa64(x.gpuIDs(1)[0]) + `"]`)
			if !row.HasClass("row-violation") || strings.TrimSpace(row.Find(`[data-testid="used-by"] .mono`).Text()) != "bob" {
				t.Errorf("status row of GPU 1: %q", row.Text())
			}
			if row := status.Doc.Find(`[data-testid="status-gpu-` + itoa64(x.gpuIDs(2)[0]) + `"]`); !strings.Contains(row.Find(`[data-testid="booked-by"]`).Text(), "Alice") {
				t.Errorf("status row of GPU 2: %q", row.Text())
			}
			if status.Doc.Find(`svg.spark polyline`).Length() == 0 || status.Doc.Find(`[data-testid="agent-online"]`).Length() != 1 {
				t.Errorf("status page lacks sparklines or the online badge")
			}
			x.clock.Add(3 * time.Minute)
			if admin.Get("/status").Doc.Find(`[data-testid="agent-offline"]`).Length() != 1 {
				t.Errorf("a node silent for 3 min is not marked offline")
			}
		})
	}
}

// TestAgentPortalOutage: the portal process stops during sampling and a new
// one starts on the same database and address: every minute arrives once.
func TestAgentPortalOutage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := enrolledE2E(t, d)
			x.run(3 * time.Minute)
			addr := x.srv.Listener.Addr().String()
			x.srv.Close()
			x.run(12 * time.Minute)
			if st := x.d.CurrentStatus(); st.SpoolDepth < 10 {
				t.Errorf("spool depth during the outage = %d, want ≥ 10", st.SpoolDepth)
			}
			srv2, err := web.New(web.Config{Listen: addr, Location: time.UTC, Now: x.clock.Now, Logger: discardLogger()}, telemetry.NewWhole(x.env.DB), webtest.SessionStore(x.env.DB))
			if err != nil {
				t.Fatal(err)
			}
			x.srv = httptest.NewUnstartedServer(srv2.Echo)
			x.srv.Listener.Close()
			x.srv.Listener = listenAgain(t, addr)
			x.srv.Start()
			x.run(3 * time.Minute)
			if err := x.d.DeliverOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			minutes := int64(17) // 14:00–14:16 complete; 14:17 closes with the first sample of 14:18
			var total, distinct int64
			x.env.DB.Gorm.Table("gpu_usage_minutes").Count(&total)
			x.env.DB.Gorm.Table("gpu_usage_minutes").Where("minute >= ? AND minute < ?", e2eT0, e2eT0.Add(time.Duration(minutes)*time.Minute)).Distinct("minute").Count(&distinct)
			if total != 8*minutes || distinct != minutes {
				t.Errorf("stored %d GPU-minutes over %d distinct minutes, want %d over %d", total, distinct, 8*minutes, minutes)
			}
		})
	}
}
