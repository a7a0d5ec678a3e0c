package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
)

// TestHeartbeatCommitsAsynchronouslyOnly: a heartbeat is stored, and the
// synchronous_commit it turns off for its own commit (PostgreSQL) is on
// again for whatever the same connection runs next.
func TestHeartbeatCommitsAsynchronouslyOnly(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	nodeID, _ := enrolled(t, db, "gpu42", 42, 1)
	db.SQL.SetMaxOpenConns(1) // the heartbeat's connection is the one asked next
	// Test databases commit asynchronously (storetest); this connection,
	// as a server's, does not.
	if _, err := db.SQL.Exec("SET synchronous_commit = on"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	hb := wire.Heartbeat{AgentVersion: "1.2.3", SpoolDepth: 7, NVMLOK: true, Lock: "lock v2"}
	if err := db.RecordHeartbeat(context.Background(), nodeID, hb, at); err != nil {
		t.Fatal(err)
	}
	n, err := db.AgentNode(context.Background(), nodeID)
	if err != nil {
		t.Fatal(err)
	}
	if n.AgentVersion != "1.2.3" || n.SpoolDepth != 7 || !n.NVMLOK || n.Lock != "lock v2" ||
		n.LastHeartbeatAt == nil || !n.LastHeartbeatAt.Equal(at) || n.LastSeenAt == nil || !n.LastSeenAt.Equal(at) {
		t.Errorf("stored heartbeat: %+v", n)
	}
	var sync string
	if err := db.SQL.QueryRow("SHOW synchronous_commit").Scan(&sync); err != nil || sync != "on" {
		t.Errorf("synchronous_commit after a heartbeat = %q, %v; want on", sync, err)
	}
}
