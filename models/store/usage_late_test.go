package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestLateMinutesMarkTheirHours: minutes inserted into hours the job has
// already rolled mark each such minute dirty, once, whichever of the two
// tables they land in and however many rows one statement brings
// (PostgreSQL: one trigger call per statement over its rows, migration
// 00034; SQLite: a row trigger), and minutes after the rolled hours mark
// nothing.
func TestLateMinutesMarkTheirHours(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, dialect)
			ids := syntheticWeek(t, db)
			roll(t, db, 5)
			// A late minute is marked as lo = hi; the fixture's restamp of
			// the range it wrote may add a range mark of its own.
			dirty := func() (n int64) {
				t.Helper()
				if err := db.Gorm.Raw("SELECT COUNT(*) FROM usage_rollup_dirty WHERE lo = hi").Row().Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := dirty(); n != 0 {
				t.Fatalf("%d dirty marks right after the roll", n)
			}
			f := &reportFixture{t: t, db: db}
			if err := db.Gorm.Raw("SELECT id FROM gpus ORDER BY id").Scan(&f.gpus).Error; err != nil {
				t.Fatal(err)
			}
			// Three late minutes of one GPU with a user row each: six rows
			// in two statements, three minutes.
			f.use(3, local(35, 10, 30), local(35, 10, 33), 20, "bob", ids.bob, 2000)
			if n := dirty(); n != 3 {
				t.Errorf("after three late minutes in both tables: %d minutes marked, want 3", n)
			}
			// The same minutes on another GPU: nothing new to mark.
			f.use(2, local(35, 10, 30), local(35, 10, 33), 20, "", 0, 2000)
			if n := dirty(); n != 3 {
				t.Errorf("after the same minutes on another GPU: %d minutes marked, want 3", n)
			}
			// Minutes after the rolled hours are not late.
			f.use(3, rollNow.Add(time.Hour), rollNow.Add(time.Hour+2*time.Minute), 20, "bob", ids.bob, 2000)
			if n := dirty(); n != 3 {
				t.Errorf("after two minutes past the rolled hours: %d minutes marked, want 3", n)
			}
		})
	}
}

// TestIngestOfTheCurrentHourSkipsTheRollLock: while the roll job holds its
// lock (summing hours), minutes of the database clock's current hour are
// stored at once, and a minute of an earlier hour, which the job may be
// rolling, still waits for it (here: gives up at its lock_timeout).
func TestIngestOfTheCurrentHourSkipsTheRollLock(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	syntheticWeek(t, db)
	var gpu int64
	if err := db.Gorm.Raw("SELECT MIN(id) FROM gpus").Row().Scan(&gpu); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	job, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Rollback()
	if _, err := job.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7300018)"); err != nil {
		t.Fatal(err)
	}
	insert := func(minute string) error {
		tx, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '1s'"); err != nil {
			t.Fatal(err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO gpu_usage_minutes (gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples)
			VALUES ($1, `+minute+`, 50, 60, 1000, 81920, 6)`, gpu)
		return err
	}
	for _, tt := range []struct {
		name, minute string
		waits        bool
	}{
		{"this hour", "date_trunc('hour', now()) + interval '30 minutes'", false},
		{"the hour before", "date_trunc('hour', now()) - interval '30 minutes'", true},
	} {
		err := insert(tt.minute)
		if tt.waits != store.IsLockTimeout(err) || (!tt.waits && err != nil) {
			t.Errorf("%s: insert while the roll holds its lock: %v; want waiting for it %v", tt.name, err, tt.waits)
		}
	}
}
