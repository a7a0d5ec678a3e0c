package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
)

// holdLock opens a transaction on db (another replica) that takes a lock
// with stmt and keeps it until the test ends or release is called.
func holdLock(t *testing.T, db *store.DB, stmt string) (release func()) {
	t.Helper()
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, stmt); err != nil {
		t.Fatal(err)
	}
	release = func() {
		if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
			t.Error(err)
		}
	}
	t.Cleanup(release)
	return release
}

// TestJobsNeverQueueIngest: on two replicas of one PostgreSQL, a
// transaction of replica B holds a lock a job of replica A needs. The job
// gives up with models.ErrLockBusy (which the runner retries in 30 s), and
// an ingest started while it tries completes while B still holds the lock:
// had the job queued for the lock, the ingest would have queued behind it
// until B let go.
func TestJobsNeverQueueIngest(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	ret := 400 * 24 * time.Hour
	for _, tc := range []struct {
		name, hold string
		job        func(*store.DB) error
	}{
		{"usage-rollup", "SELECT pg_advisory_xact_lock_shared(7300018)", // an ingest of B, in its trigger
			func(db *store.DB) error { _, err := db.RollUsage(ctx, now, now.Add(-ret), 50); return err }},
		{"usage-retention", "SELECT count(*) FROM gpu_usage_minutes", // a report reading minutes
			func(db *store.DB) error { _, err := telemetry.New(db).PruneUsage(ctx, now.Add(-ret)); return err }},
		{"usage-partitions", "SELECT count(*) FROM gpu_usage_minutes_default", // minutes of days not yet made
			func(db *store.DB) error { _, err := telemetry.New(db).EnsureUsagePartitions(ctx, now); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := storetest.MigratedURL(t, store.Postgres)
			a, b := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
			fixture(t, a, 1)
			node, _ := enrolled(t, a, "gpu11", 1, 4)
			release := holdLock(t, b, tc.hold)
			done := make(chan error, 1)
			go func() { done <- tc.job(a) }()
			time.Sleep(200 * time.Millisecond) // lets the job ask for its lock; not asserted
			ictx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if _, err := telemetry.New(a).IngestUsage(ictx, node, usageBatch(1, now.Add(-30*time.Minute), 10, 4), ret, now); err != nil {
				t.Fatalf("ingest while the job wanted a lock held elsewhere: %v", err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, models.ErrLockBusy) {
					t.Errorf("job with its lock held elsewhere: %v; want models.ErrLockBusy", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the job did not give up on the held lock")
			}
			release()
			if err := tc.job(a); err != nil {
				t.Errorf("job once the lock is free: %v", err)
			}
		})
	}
}
