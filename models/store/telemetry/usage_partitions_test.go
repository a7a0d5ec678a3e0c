package telemetry_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
)

func partitionExists(t *testing.T, db *store.DB, name string) bool {
	t.Helper()
	var n int64
	if err := db.Gorm.Raw("SELECT COUNT(*) FROM pg_class WHERE relname = ?", name).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func countWhere(t *testing.T, db *store.DB, table, where string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Gorm.Table(table).Where(where, args...).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUsagePartitionsUnderIngest: on PostgreSQL the job creates the day
// partitions ahead and retention drops whole days, while an agent keeps
// ingesting; nothing it sent to the kept days is lost, nothing of the
// dropped days is left, and a minute that landed in the default partition
// moves into its day when that is created.
func TestUsagePartitionsUnderIngest(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	storetest.Fixture(t, db, 1)
	node, _ := storetest.Enrolled(t, db, "gpu11", 1, 4)
	ret := 400 * 24 * time.Hour
	day := func(d int) time.Time { return time.Date(2030, 1, d, 0, 0, 0, 0, time.UTC) }

	n, err := telemetry.New(db).EnsureUsagePartitions(ctx, day(1).Add(12*time.Hour))
	if want := 2 * (models.PartitionDaysBack + models.PartitionDaysAhead + 1); err != nil || n != want {
		t.Fatalf("ensure = %d, %v; want %d partitions", n, err, want)
	}
	for _, name := range []string{"gpu_usage_minutes_p20291231", "gpu_user_usage_minutes_p20300108"} {
		if !partitionExists(t, db, name) {
			t.Errorf("partition %s missing", name)
		}
	}
	if n, err := telemetry.New(db).EnsureUsagePartitions(ctx, day(1).Add(13*time.Hour)); err != nil || n != 0 {
		t.Errorf("second ensure = %d, %v; want nothing to create", n, err)
	}
	if _, err := telemetry.New(db).IngestUsage(ctx, node, storetest.UsageBatch(1, day(1).Add(10*time.Hour), 30, 4), ret, day(1).Add(11*time.Hour)); err != nil {
		t.Fatal(err)
	}

	// The agent sends one minute after another into 2 January while the
	// job creates the next days and retention drops 31 December and 1 January.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent int
	var ingestErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			default:
			}
			if k == 24*60 { // 2 January is full; the prune may retry for seconds
				<-stop
				return
			}
			m := day(2).Add(time.Duration(k) * time.Minute)
			if _, err := telemetry.New(db).IngestUsage(ctx, node, storetest.UsageBatch(1, m, 1, 4), ret, m.Add(time.Minute)); err != nil {
				ingestErr = err
				return
			}
			sent++
		}
	}()
	created, err := telemetry.New(db).EnsureUsagePartitions(ctx, day(5))
	if err != nil || created != 2*4 {
		t.Errorf("ensure on 5 January = %d, %v; want 9–12 January for both tables", created, err)
	}
	if _, err := telemetry.New(db).PruneUsage(ctx, day(2)); err != nil {
		t.Errorf("prune: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // let some minutes arrive after the drop
	close(stop)
	wg.Wait()
	if ingestErr != nil {
		t.Fatalf("ingest during partition changes: %v", ingestErr)
	}
	if sent == 0 {
		t.Fatal("no minute was ingested while the partitions changed")
	}
	for _, name := range []string{"gpu_usage_minutes_p20291231", "gpu_usage_minutes_p20300101", "gpu_user_usage_minutes_p20300101"} {
		if partitionExists(t, db, name) {
			t.Errorf("partition %s not dropped", name)
		}
	}
	if !partitionExists(t, db, "gpu_usage_minutes_p20300112") {
		t.Error("partition of 12 January not created ahead")
	}
	if got := countWhere(t, db, "gpu_usage_minutes", "minute < ?", day(2)); got != 0 {
		t.Errorf("%d GPU-minutes before the cutoff left", got)
	}
	if got, want := countWhere(t, db, "gpu_usage_minutes", "minute >= ?", day(2)), int64(sent*4); got != want {
		t.Errorf("GPU-minutes kept = %d, want %d (every one sent)", got, want)
	}
	if got, want := countWhere(t, db, "gpu_usage_minutes_p20300102", "1 = 1"), int64(sent*4); got != want {
		t.Errorf("2 January's partition holds %d rows, want %d", got, want)
	}

	// A minute for a day without its partition lands in the default one
	// and moves into its day when the job creates it.
	far := day(20).Add(3 * time.Hour)
	if _, err := telemetry.New(db).IngestUsage(ctx, node, storetest.UsageBatch(1, far, 2, 4), ret, far.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := countWhere(t, db, "gpu_usage_minutes_default", "1 = 1"); got != 8 {
		t.Fatalf("default partition holds %d rows, want 8", got)
	}
	if _, err := telemetry.New(db).EnsureUsagePartitions(ctx, day(19)); err != nil {
		t.Fatal(err)
	}
	if got := countWhere(t, db, "gpu_usage_minutes_default", "1 = 1"); got != 0 {
		t.Errorf("default partition still holds %d rows", got)
	}
	if got := countWhere(t, db, "gpu_usage_minutes_p20300120", "1 = 1"); got != 8 {
		t.Errorf("20 January's partition holds %d rows, want 8", got)
	}
	if got := countWhere(t, db, "gpu_user_usage_minutes_p20300120", "1 = 1"); got != 4 {
		t.Errorf("20 January's user partition holds %d rows, want 4", got)
	}
}

// TestUsagePartitionsSQLite: the same calls on SQLite create nothing and
// prune with a DELETE.
func TestUsagePartitionsSQLite(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	storetest.Fixture(t, db, 1)
	node, _ := storetest.Enrolled(t, db, "gpu11", 1, 4)
	at := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	if n, err := telemetry.New(db).EnsureUsagePartitions(ctx, at); err != nil || n != 0 {
		t.Errorf("ensure on SQLite = %d, %v; want nothing", n, err)
	}
	if _, err := telemetry.New(db).IngestUsage(ctx, node, storetest.UsageBatch(1, at, 10, 4), 400*24*time.Hour, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, err := telemetry.New(db).PruneUsage(ctx, at.Add(5*time.Minute)); err != nil || n != 20 {
		t.Errorf("prune = %d, %v; want 20", n, err)
	}
}

// TestUsagePartitionMigrationKeepsData: migration 00018 on PostgreSQL turns
// tables with minutes in them into partitioned ones without losing a row,
// the old rows in the legacy partition, and its down migration puts every
// row back into plain tables.
func TestUsagePartitionMigrationKeepsData(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	storetest.Fixture(t, db, 1)
	node, _ := storetest.Enrolled(t, db, "gpu11", 1, 4)
	// Back to just before 00018 (every later migration rolled back over
	// the fixture's rows), and minutes stored as the old schema held them:
	// 4 GPUs × 30 minutes, and a user's row on 2 of them.
	downTo17 := func() {
		t.Helper()
		for {
			st, err := db.MigrationStatus(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(st, func(m store.MigrationState) bool { return m.Version == 18 && m.Applied }) {
				return
			}
			if _, err := db.MigrateDownOne(ctx); err != nil {
				t.Fatalf("migrate down: %v", err)
			}
		}
	}
	downTo17()
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO gpu_usage_minutes (gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples)
		 SELECT g.id, $1::timestamptz + m * interval '1 minute', 50, 60, 100, 81920, 6
		 FROM gpus g CROSS JOIN generate_series(0, 29) m WHERE g.node_id = $2`,
		`INSERT INTO gpu_user_usage_minutes (gpu_id, minute, user_name)
		 SELECT g.id, $1::timestamptz + m * interval '1 minute', 'ann'
		 FROM gpus g CROSS JOIN generate_series(0, 29) m WHERE g.node_id = $2 AND g.idx < 2`,
	} {
		if _, err := db.SQL.ExecContext(ctx, q, at, node); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.MigrateUp(ctx); err != nil {
		t.Fatalf("migrate up over data: %v", err)
	}
	if got := countWhere(t, db, "gpu_usage_minutes_legacy", "1 = 1"); got != 120 {
		t.Errorf("legacy partition holds %d GPU-minutes, want 120", got)
	}
	if got := countWhere(t, db, "gpu_user_usage_minutes_legacy", "1 = 1"); got != 60 {
		t.Errorf("legacy partition holds %d user rows, want 60", got)
	}
	later := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := telemetry.New(db).IngestUsage(ctx, node, storetest.UsageBatch(1, later, 10, 4), 4000*24*time.Hour, later.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	downTo17()
	if got := storetest.Count(t, db, "gpu_usage_minutes"); got != 160 {
		t.Errorf("after down: %d GPU-minutes, want 160", got)
	}
	if got := storetest.Count(t, db, "gpu_user_usage_minutes"); got != 80 {
		t.Errorf("after down: %d user rows, want 80", got)
	}
}
