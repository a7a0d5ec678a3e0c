package store_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestPortalCounts: bookings are counted in the phase Booking.Phase gives
// them at now, requests by status with every status present, and enrolled
// agents split by the 2-minute offline rule; a node never enrolled is no agent.
func TestPortalCounts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, node := fixture(t, db, 2)
		now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		exec := func(q string, args ...any) {
			t.Helper()
			if err := db.Gorm.Exec(q, args...).Error; err != nil {
				t.Fatal(err)
			}
		}
		h := time.Hour
		rows := []struct {
			from, to time.Time
			status   string
			released *time.Time
			want     models.BookingPhase
		}{
			{now.Add(h), now.Add(2 * h), models.StatusConfirmed, nil, models.PhaseUpcoming},
			{now.Add(-h), now.Add(h), models.StatusConfirmed, nil, models.PhaseActive},
			{now, now.Add(h), models.StatusConfirmed, nil, models.PhaseActive},    // starts this instant
			{now.Add(-2 * h), now, models.StatusConfirmed, nil, models.PhasePast}, // ends this instant
			{now.Add(-h), now.Add(h), models.StatusConfirmed, ptr(now.Add(-time.Minute)), models.PhasePast},
			{now.Add(-h), now.Add(h), models.StatusConfirmed, ptr(now.Add(time.Minute)), models.PhaseActive},
			{now.Add(h), now.Add(2 * h), models.StatusCancelled, nil, models.PhaseCancelled},
		}
		want := map[models.BookingPhase]int64{models.PhaseUpcoming: 0, models.PhaseActive: 0, models.PhasePast: 0, models.PhaseCancelled: 0}
		for _, r := range rows {
			exec(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, status, released_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				u.ID, node.ID, r.from, r.to, r.status, r.released, now.Add(-24*h), now.Add(-24*h))
			b := models.Booking{StartsAt: r.from, EndsAt: r.to, Status: r.status, ReleasedAt: r.released}
			if b.Phase(now) != r.want {
				t.Fatalf("fixture: Phase = %s, want %s", b.Phase(now), r.want)
			}
			want[r.want]++
		}
		for _, s := range []string{models.RequestPending, models.RequestPending, models.RequestDenied} {
			exec(`INSERT INTO priority_requests (user_id, node_id, gpu_ids, starts_at, ends_at, purpose, urgency, plan, give_back, status, created_at, updated_at)
				VALUES (?, ?, '[]', ?, ?, 'p', 'u', 'p', 'g', ?, ?, ?)`, u.ID, node.ID, now.Add(h), now.Add(2*h), s, now, now)
		}
		n2, n3, n4 := extraNode(t, db, "n2"), extraNode(t, db, "n3"), extraNode(t, db, "n4")
		exec(`INSERT INTO agent_nodes (node_id, credential_hash, last_seen_at, updated_at) VALUES (?, 'h1', ?, ?)`, node.ID, now.Add(-time.Minute), now)
		exec(`INSERT INTO agent_nodes (node_id, credential_hash, last_seen_at, updated_at) VALUES (?, 'h2', ?, ?)`, n2, now.Add(-models.NodeOfflineAfter), now)
		exec(`INSERT INTO agent_nodes (node_id, credential_hash, updated_at) VALUES (?, 'h3', ?)`, n3, now)
		exec(`INSERT INTO agent_nodes (node_id, updated_at) VALUES (?, ?)`, n4, now) // not enrolled yet

		got, err := db.PortalCounts(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		for p, n := range want {
			if got.Bookings[p] != n {
				t.Errorf("bookings %s = %d, want %d (all %v)", p, got.Bookings[p], n, got.Bookings)
			}
		}
		if len(got.Bookings) != len(models.BookingPhases) {
			t.Errorf("booking phases %v", got.Bookings)
		}
		wantReq := map[string]int64{models.RequestPending: 2, models.RequestApproved: 0, models.RequestDenied: 1, models.RequestExpired: 0, models.RequestWithdrawn: 0}
		for s, n := range wantReq {
			if got.Requests[s] != n {
				t.Errorf("requests %s = %d, want %d", s, got.Requests[s], n)
			}
		}
		if got.AgentsOnline != 1 || got.AgentsOffline != 2 {
			t.Errorf("agents online %d offline %d, want 1 and 2", got.AgentsOnline, got.AgentsOffline)
		}
	})
}

func ptr(t time.Time) *time.Time { return &t }

// extraNode adds a node with one GPU and returns its ID.
func extraNode(t *testing.T, db *store.DB, name string) int64 {
	t.Helper()
	gpus, err := models.NewNodeGPUs(name, 1, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		t.Fatal(err)
	}
	n := &models.Node{Name: name}
	if err := db.CreateNode(ctx, n, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	return n.ID
}
