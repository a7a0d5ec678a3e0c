package store_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// The agent fixtures live in storetest, shared with the telemetry half's tests.
var (
	at0        = storetest.AgentAt0
	realUUID   = storetest.RealUUID
	enrolled   = storetest.Enrolled
	inventory  = storetest.Inventory
	usageBatch = storetest.UsageBatch
	count      = storetest.Count
)

func TestAgentEnrollment(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, node := fixture(t, db, 2)
		tok, exp, err := db.CreateEnrollToken(ctx, node.ID, at0, models.CLIActor)
		if err != nil || !exp.Equal(at0.Add(24*time.Hour)) {
			t.Fatalf("token: %v, expires %v", err, exp)
		}
		expired, _, _ := db.CreateEnrollToken(ctx, node.ID, at0, models.CLIActor)
		req := wire.EnrollRequest{Token: tok, Hostname: "gpu01", AgentVersion: "1.0"}
		resp, err := db.Enroll(ctx, req, at0.Add(time.Hour))
		if err != nil || resp.NodeID != node.ID || resp.NodeName != "gpu01" || resp.Credential == "" {
			t.Fatalf("enroll = %+v, %v", resp, err)
		}
		refused := []struct {
			name string
			tok  string
			at   time.Time
		}{
			{"reused", tok, at0.Add(2 * time.Hour)},
			{"expired", expired, at0.Add(24 * time.Hour)},
			{"unknown", "gpbe_nope", at0},
		}
		for _, tt := range refused {
			t.Run(tt.name, func(t *testing.T) {
				_, err := db.Enroll(ctx, wire.EnrollRequest{Token: tt.tok}, tt.at)
				if models.ErrorCode(err) != models.EUNAUTHORIZED {
					t.Errorf("got %v, want unauthorized", err)
				}
			})
		}
		n, err := db.NodeByCredential(ctx, resp.Credential, at0.Add(time.Hour))
		if err != nil || n.NodeID != node.ID || !n.Enrolled || n.Hostname != "gpu01" || n.AgentVersion != "1.0" || n.LastSeenAt == nil {
			t.Fatalf("node by credential = %+v, %v", n, err)
		}
		again, _, _ := db.CreateEnrollToken(ctx, node.ID, at0, models.CLIActor)
		if _, err := db.Enroll(ctx, wire.EnrollRequest{Token: again}, at0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NodeByCredential(ctx, resp.Credential, at0); models.ErrorCode(err) != models.EUNAUTHORIZED {
			t.Errorf("replaced credential: got %v, want unauthorized", err)
		}
	})
}

func TestAgentInventory(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		id, _ := enrolled(t, db, "gpu01", 1, 4)
		other, _ := enrolled(t, db, "gpu02", 2, 2)
		n, _ := db.Node(ctx, id)
		if len(n.GPUs) != 4 || n.GPUs[2].UUID != realUUID(1, 2) || !n.GPUs[2].InService {
			t.Fatalf("placeholders not replaced by index: %+v", n.GPUs)
		}
		ids := []int64{n.GPUs[0].ID, n.GPUs[1].ID, n.GPUs[2].ID, n.GPUs[3].ID}
		inv := inventory(1, 4)
		inv.GPUs = append(inv.GPUs[:1], inv.GPUs[2:]...) // GPU 1 disappears
		res, err := db.ApplyInventory(ctx, id, inv, at0)
		if err != nil || res != (models.InventoryResult{Updated: 3, Missing: 1}) {
			t.Fatalf("inventory = %+v, %v", res, err)
		}
		g, _ := db.GPU(ctx, ids[1])
		if g.InService || g.OutOfServiceReason != models.NotReportedReason || g.UUID != realUUID(1, 1) {
			t.Errorf("missing GPU = %+v, want out of service, not deleted", g)
		}
		if _, err := db.ApplyInventory(ctx, id, inventory(1, 4), at0); err != nil {
			t.Fatal(err)
		}
		if g, _ := db.GPU(ctx, ids[1]); !g.InService || g.Index != 1 {
			t.Errorf("returned GPU = %+v, want back in service at index 1", g)
		}
		theft := inventory(1, 4)
		theft.GPUs[0].UUID = realUUID(2, 0)
		if _, err := db.ApplyInventory(ctx, id, theft, at0); models.ErrorCode(err) != models.EFORBIDDEN {
			t.Errorf("another node's GPU: got %v, want forbidden", err)
		}
		if o, _ := db.Node(ctx, other); o.GPUs[0].UUID != realUUID(2, 0) || o.GPUs[0].NodeID != other {
			t.Errorf("other node changed: %+v", o.GPUs[0])
		}
	})
}

func TestAgentUsageIdempotent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1) // ada@example.org
		n1, _ := enrolled(t, db, "gpu11", 1, 4)
		n2, _ := enrolled(t, db, "gpu12", 2, 4)
		ret := 400 * 24 * time.Hour
		now := at0.Add(time.Hour)
		b := usageBatch(1, at0, 10, 4)
		res, err := telemetry.New(db).IngestUsage(ctx, n1, b, ret, now)
		if err != nil || res != (models.UsageResult{Inserted: 40}) {
			t.Fatalf("first = %+v, %v", res, err)
		}
		res, err = telemetry.New(db).IngestUsage(ctx, n1, b, ret, now)
		if err != nil || res != (models.UsageResult{Duplicates: 40}) {
			t.Fatalf("resend = %+v, %v", res, err)
		}
		overlap := usageBatch(1, at0.Add(5*time.Minute), 10, 4) // half resent, half new
		if res, err = telemetry.New(db).IngestUsage(ctx, n1, overlap, ret, now); err != nil || res.Inserted != 20 || res.Duplicates != 20 {
			t.Fatalf("overlap = %+v, %v", res, err)
		}
		if _, err := telemetry.New(db).IngestUsage(ctx, n2, usageBatch(2, at0, 15, 4), ret, now); err != nil {
			t.Fatal(err)
		}
		if got := count(t, db, "gpu_usage_minutes"); got != 120 {
			t.Errorf("GPU-minutes = %d, want 120 (each counted once)", got)
		}
		if got := count(t, db, "gpu_user_usage_minutes"); got != 60 {
			t.Errorf("user-minutes = %d, want 60", got)
		}
		var mapped int64
		db.Gorm.Table("gpu_user_usage_minutes").Where("user_name = 'ada' AND user_id = ?", u.ID).Count(&mapped)
		if mapped != 30 {
			t.Errorf("ada's minutes mapped to her user = %d, want 30", mapped)
		}
		if _, err := telemetry.New(db).IngestUsage(ctx, n2, usageBatch(1, at0.Add(time.Hour), 1, 4), ret, now); models.ErrorCode(err) != models.EFORBIDDEN {
			t.Errorf("node 2 posting node 1's GPUs: got %v, want forbidden", err)
		}
		if got := count(t, db, "gpu_usage_minutes"); got != 120 {
			t.Errorf("after a refused batch: %d rows, want 120 (nothing written)", got)
		}
		stale := usageBatch(1, now.Add(-ret-time.Hour), 1, 4)
		if res, err := telemetry.New(db).IngestUsage(ctx, n1, stale, ret, now); err != nil || res.Stale != 4 {
			t.Errorf("stale = %+v, %v", res, err)
		}
		pruned, err := telemetry.New(db).PruneUsage(ctx, at0.Add(5*time.Minute))
		if err != nil || pruned != 40 {
			t.Errorf("pruned = %d, %v; want 40 (5 minutes × 4 GPUs × 2 nodes)", pruned, err)
		}
		if got := count(t, db, "gpu_user_usage_minutes"); got != 40 {
			t.Errorf("user-minutes after prune = %d, want 40", got)
		}
	})
}
