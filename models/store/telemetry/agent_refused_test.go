package telemetry_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// TestAgentRefusedOpens: a refused open (no process, action none) is kept
// with the user's name and account; a resend with a later last_seen
// updates the same row (migration 00022 lets the kind in).
func TestAgentRefusedOpens(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := storetest.Fixture(t, db, 1)
		n1, _ := storetest.Enrolled(t, db, "gpu21", 1, 2)
		v := wire.Violation{ID: "gpu21:refused_open:x:1001:1", Kind: wire.ViolationRefused, GPUUUID: storetest.RealUUID(1, 1), User: "ada", UID: 1001,
			FirstSeen: storetest.AgentAt0, LastSeen: storetest.AgentAt0, Action: wire.ActionNone}
		later := v
		later.LastSeen = storetest.AgentAt0.Add(3 * time.Minute)
		for _, batch := range [][]wire.Violation{{v}, {later}, {v}} { // the last is a delayed resend
			if err := telemetry.New(db).RecordViolations(ctx, n1, wire.ViolationBatch{Violations: batch}, storetest.AgentAt0.Add(5*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := telemetry.New(db).Violations(ctx, models.ViolationFilter{UserID: u.ID})
		if err != nil || len(got) != 1 {
			t.Fatalf("violations = %+v, %v", got, err)
		}
		g := got[0]
		if g.Kind != wire.ViolationRefused || g.Action != wire.ActionNone || !g.FirstSeen.Equal(storetest.AgentAt0) || !g.LastSeen.Equal(later.LastSeen) ||
			g.UserName != "ada" || g.UserID != u.ID || g.PID != 0 || g.UID != 1001 || g.MemoryMiB != 0 || g.GPUIndex != 1 ||
			g.NodeName != "gpu21" || g.AgentKey != v.ID || g.BookingID != 0 || g.Container != "" {
			t.Errorf("violation = %+v", g)
		}
	})
}
