package web_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
)

func statusOfErr(err error) int {
	var se *client.StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestAgentAPIEnrollmentRefusals(t *testing.T) {
	t.Parallel()
	x := newE2E(t, "sqlite")
	ctx := context.Background()
	tok, _, err := x.env.DB.CreateEnrollToken(ctx, x.nodeID, e2eT0, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	old, _, _ := x.env.DB.CreateEnrollToken(ctx, x.nodeID, e2eT0.Add(-24*time.Hour), models.CLIActor)
	if err := x.enroll(tok); err != nil {
		t.Fatalf("first use: %v", err)
	}
	for name, token := range map[string]string{"reused": tok, "expired": old, "unknown": "gpbe_unknown", "empty": ""} {
		t.Run(name, func(t *testing.T) {
			if err := x.enroll(token); statusOfErr(err) != http.StatusUnauthorized {
				t.Errorf("got %v, want 401", err)
			}
		})
	}
	c := client.New(x.srv.URL, "gpbn_wrong", "test")
	if _, _, _, err := c.Schedule(ctx, ""); statusOfErr(err) != http.StatusUnauthorized {
		t.Errorf("wrong credential: %v, want 401", err)
	}
	if err := client.New(x.srv.URL, "", "test").PostJSON(ctx, wire.PathHeartbeat, wire.Heartbeat{}); statusOfErr(err) != http.StatusUnauthorized {
		t.Errorf("no credential: %v, want 401", err)
	}
}

// TestAgentAPIForeignGPU: node 2 posting about node 1's GPUs is refused
// with 403 and writes nothing.
func TestAgentAPIForeignGPU(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := enrolledE2E(t, d)
			ctx := context.Background()
			gpus, _ := models.NewNodeGPUs("n2", 1, "NVIDIA A100-SXM4-40GB", 40960)
			n2 := &models.Node{Name: "n2"}
			if err := x.env.DB.CreateNode(ctx, n2, gpus, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			tok, _, _ := x.env.DB.CreateEnrollToken(ctx, n2.ID, e2eT0, models.CLIActor)
			resp, err := client.New(x.srv.URL, "", "test").Enroll(ctx, wire.EnrollRequest{Token: tok})
			if err != nil || resp.NodeID != n2.ID {
				t.Fatalf("enroll n2: %+v, %v", resp, err)
			}
			c2 := client.New(x.srv.URL, resp.Credential, "test")
			c2.Attempts = 1
			theirs := x.node.UUID(3)
			pct := 50.0
			usage := wire.UsageBatch{Node: "n2", Records: []wire.UsageRecord{{GPUUUID: theirs, Minute: e2eT0,
				UtilAvgPct: &pct, UtilMaxPct: &pct, MemUsedMiB: 1, MemTotalMiB: 40960, Samples: 6}}}
			viol := wire.ViolationBatch{Node: "n2", Violations: []wire.Violation{{ID: "v1", Kind: wire.ViolationMemoryNoProcess,
				GPUUUID: theirs, FirstSeen: e2eT0, LastSeen: e2eT0, Action: wire.ActionNone}}}
			inv := wire.Inventory{Node: "n2", GPUs: []wire.GPU{{UUID: theirs, Model: "A100", MemoryMiB: 40960}}}
			if err := c2.PostJSON(ctx, wire.PathUsage, usage); statusOfErr(err) != http.StatusForbidden {
				t.Errorf("usage: %v, want 403", err)
			}
			if err := c2.PostJSON(ctx, wire.PathViolations, viol); statusOfErr(err) != http.StatusForbidden {
				t.Errorf("violations: %v, want 403", err)
			}
			if err := c2.PutInventory(ctx, inv); statusOfErr(err) != http.StatusForbidden {
				t.Errorf("inventory: %v, want 403", err)
			}
			for _, table := range []string{"gpu_usage_minutes", "agent_violations"} {
				var n int64
				x.env.DB.Gorm.Table(table).Count(&n)
				if n != 0 {
					t.Errorf("%s has %d rows after refused posts", table, n)
				}
			}
			if g, _ := x.env.DB.GPU(ctx, x.gpuIDs(3)[0]); g.NodeID != x.nodeID {
				t.Errorf("GPU 3 moved to node %d", g.NodeID)
			}
			s, _, _, err := c2.Schedule(ctx, "")
			if err != nil || s.Node != "n2" || len(s.Bookings) != 0 {
				t.Errorf("n2's schedule = %+v, %v", s, err)
			}
		})
	}
}

func TestAgentAPIScheduleETag(t *testing.T) {
	t.Parallel()
	x := enrolledE2E(t, "sqlite")
	ctx := context.Background()
	s, etag, changed, err := x.client.Schedule(ctx, "")
	if err != nil || !changed || etag == "" || len(s.Bookings) != 0 || s.PortalURL == "" {
		t.Fatalf("first fetch: %+v %q %v %v", s, etag, changed, err)
	}
	if _, same, changed, err := x.client.Schedule(ctx, etag); err != nil || changed || same != etag {
		t.Errorf("unchanged: changed=%v etag=%q err=%v, want a 304", changed, same, err)
	}
	u := x.env.AddUser("alice@example.org", "Alice", false)
	if _, err := x.env.DB.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: x.gpuIDs(0), StartsAt: e2eT0.Add(time.Hour),
		EndsAt: e2eT0.Add(2 * time.Hour)}, models.DefaultBookingLimits, e2eT0, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	s, newTag, changed, err := x.client.Schedule(ctx, etag)
	if err != nil || !changed || newTag == etag || len(s.Bookings) != 1 {
		t.Fatalf("after a booking: %+v %q %v %v", s, newTag, changed, err)
	}
	b := s.Bookings[0]
	if b.User != "alice" || b.Email != "" || len(b.GPUUUIDs) != 1 || b.GPUUUIDs[0] != x.node.UUID(0) || b.Kind != models.KindStandard {
		t.Errorf("booking = %+v", b)
	}
}

// TestAgentAPIUsageResend: the same batch twice through the router is
// stored once and answered 204 both times.
func TestAgentAPIUsageResend(t *testing.T) {
	t.Parallel()
	x := enrolledE2E(t, "sqlite")
	ctx := context.Background()
	pct := 20.0
	b := wire.UsageBatch{Node: "n1"}
	for i := range 8 {
		b.Records = append(b.Records, wire.UsageRecord{GPUUUID: x.node.UUID(i), Minute: e2eT0, UtilAvgPct: &pct, UtilMaxPct: &pct,
			MemTotalMiB: 40960, Samples: 6, Users: []wire.UserUsage{{User: "alice", UID: 1001, Processes: 1}}})
	}
	for try := range 2 {
		if err := x.client.PostJSON(ctx, wire.PathUsage, b); err != nil {
			t.Fatalf("try %d: %v", try, err)
		}
	}
	var n, users int64
	x.env.DB.Gorm.Table("gpu_usage_minutes").Count(&n)
	x.env.DB.Gorm.Table("gpu_user_usage_minutes").Count(&users)
	if n != 8 || users != 8 {
		t.Errorf("rows = %d GPU-minutes, %d user-minutes; want 8 and 8", n, users)
	}
	b.Records[0].Minute = e2eT0.Add(time.Hour) // in the future beyond the skew
	if err := x.client.PostJSON(ctx, wire.PathUsage, b); statusOfErr(err) != http.StatusUnprocessableEntity {
		t.Errorf("future minute: %v, want 422", err)
	}
}
