package telemetry

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// On PostgreSQL the per-minute usage tables are partitioned by UTC day
// (migration 00018): EnsureUsagePartitions creates the days ahead and
// PruneUsage drops whole days. SQLite keeps plain tables; there the first
// is a no-op and the second a DELETE, so both databases share the callers.

// usageTables are the partitioned tables, in the order every writer locks
// them (IngestUsage and the restamps write the GPU-minutes first): a prune
// that took them the other way round deadlocked with ingest.
var usageTables = []string{"gpu_usage_minutes", "gpu_user_usage_minutes"}

// usagePartition is one partition and its range; From is zero for the
// legacy partition (MINVALUE), both are zero for the default one.
type usagePartition struct {
	Name     string
	From, To time.Time
	Default  bool
}

var boundRE = regexp.MustCompile(`^FOR VALUES FROM \((MINVALUE|'[^']+')\) TO \('([^']+)'\)$`)

// pgBound parses a bound of pg_get_expr under TimeZone UTC.
func pgBound(s string) (time.Time, error) {
	if s == "MINVALUE" {
		return time.Time{}, nil
	}
	if len(s) > 1 && s[0] == '\'' {
		s = s[1 : len(s)-1]
	}
	return time.Parse("2006-01-02 15:04:05-07", s)
}

// usagePartitions lists table's partitions; tx must have TimeZone UTC.
func usagePartitions(tx *gorm.DB, table string) ([]usagePartition, error) {
	var rows []struct {
		Name  string `gorm:"column:name"`
		Bound string `gorm:"column:bound"`
	}
	err := tx.Raw(`SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = CAST(? AS regclass) ORDER BY c.relname`, table).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: usage partitions: %w", err)
	}
	out := make([]usagePartition, 0, len(rows))
	for _, r := range rows {
		if r.Bound == "DEFAULT" {
			out = append(out, usagePartition{Name: r.Name, Default: true})
			continue
		}
		m := boundRE.FindStringSubmatch(r.Bound)
		if m == nil {
			return nil, fmt.Errorf("store: usage partition %s: bound %q", r.Name, r.Bound)
		}
		from, err1 := pgBound(m[1])
		to, err2 := pgBound(m[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("store: usage partition %s: bound %q", r.Name, r.Bound)
		}
		out = append(out, usagePartition{Name: r.Name, From: from.UTC(), To: to.UTC()})
	}
	return out, nil
}

// inUTC runs fn in a transaction whose TimeZone is UTC (for the bounds).
func (db *Store) inUTC(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return db.st.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL TimeZone = 'UTC'").Error; err != nil {
			return err
		}
		return fn(tx)
	})
}

// EnsureUsagePartitions creates the missing day partitions of both usage
// tables from models.PartitionDaysBack before now to PartitionDaysAhead
// after it, each day in its own transaction. Minutes of that day that the
// default partition holds meanwhile (a job that fell behind) move into it.
// It returns how many partitions it created; on SQLite, none.
func (db *Store) EnsureUsagePartitions(ctx context.Context, now time.Time) (int, error) {
	if db.st.Dialect != store.Postgres {
		return 0, nil
	}
	created := 0
	for _, table := range usageTables {
		var parts []usagePartition
		if err := db.inUTC(ctx, func(tx *gorm.DB) (err error) { parts, err = usagePartitions(tx, table); return err }); err != nil {
			return created, err
		}
		var notBefore time.Time
		have := map[time.Time]bool{}
		for _, p := range parts {
			if !p.Default && p.To.After(notBefore) && p.From.IsZero() {
				notBefore = p.To // the legacy partition holds every day before
			}
			have[p.From] = true
		}
		for _, day := range models.PartitionDaysDue(now, notBefore) {
			if have[day] {
				continue
			}
			if err := db.inUTC(ctx, func(tx *gorm.DB) error { return createDayPartition(tx, table, day) }); err != nil {
				return created, store.AsLockBusy(err)
			}
			created++
		}
	}
	return created, nil
}

// createDayPartition makes table's partition of day: a table like the
// parent, the default partition's rows of that day moved into it, attached.
func createDayPartition(tx *gorm.DB, table string, day time.Time) error {
	name := models.UsagePartitionName(table, day)
	from, to := day.UTC(), day.UTC().AddDate(0, 0, 1)
	for _, s := range []string{
		// The attach locks the default partition exclusively: take that
		// lock first, NOWAIT, rather than queue with ingest behind us (see
		// prunePartitioned); the job tries again 30 s later.
		fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", store.PartitionLockWait.Milliseconds()),
		fmt.Sprintf("LOCK TABLE %s_default IN ACCESS EXCLUSIVE MODE NOWAIT", table),
		fmt.Sprintf("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)", name, table),
		fmt.Sprintf("WITH moved AS (DELETE FROM %s_default WHERE minute >= @from AND minute < @to RETURNING *) INSERT INTO %s SELECT * FROM moved", table, name),
		fmt.Sprintf("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')", table, name, from.Format(time.RFC3339), to.Format(time.RFC3339)),
	} {
		var args []any
		if strings.Contains(s, "@from") {
			args = append(args, map[string]any{"from": from, "to": to})
		}
		if err := tx.Exec(s, args...).Error; err != nil {
			return fmt.Errorf("store: create usage partition %s: %w", name, err)
		}
	}
	return nil
}

// prunePartitions drops table's partitions that end at or before before
// and deletes the older rows of the default partition and of the legacy
// one (the table before partitioning) until that is dropped in turn. The
// day that holds before is kept whole: minutes live up to a day longer than
// the retention, and no prune deletes rows from a day partition.
func prunePartitions(tx *gorm.DB, table string, before time.Time) (dropped []string, deleted int64, err error) {
	parts, err := usagePartitions(tx, table)
	if err != nil {
		return nil, 0, err
	}
	for _, p := range parts {
		switch {
		case models.PartitionDroppable(p.To, before):
			if err := tx.Exec("DROP TABLE " + p.Name).Error; err != nil {
				return dropped, deleted, fmt.Errorf("store: drop usage partition %s: %w", p.Name, err)
			}
			dropped = append(dropped, p.Name)
		case p.Default || p.From.IsZero():
			r := tx.Exec("DELETE FROM "+p.Name+" WHERE minute < ?", store.UTC(before))
			if r.Error != nil {
				return dropped, deleted, fmt.Errorf("store: prune usage partition %s: %w", p.Name, r.Error)
			}
			deleted += r.RowsAffected
		}
	}
	return dropped, deleted, nil
}

// prunePartitioned is PruneUsage on PostgreSQL, in one transaction. It
// returns the GPU-minutes deleted, plus the planner's row estimate of each
// GPU-minute partition dropped (counting them would read them).
//
// Dropping a partition locks its parent exclusively. The prune takes both
// parents at once, in the writers' order, and waits for them at most
// store.PartitionLockWait: an ingest that holds the GPU table and waits for the
// roll job (the store's usage_hours.go), which waits for a lock queued behind this
// one, is a cycle that PostgreSQL would break after deadlock_timeout (1 s)
// by aborting one of them, possibly the ingest. Giving up first, and trying
// again a moment later, keeps the victim the prune.
func (db *Store) prunePartitioned(ctx context.Context, before time.Time) (int64, error) {
	var err error
	for try := range partitionLockTries {
		var n int64
		if n, err = db.prunePartitionedOnce(ctx, before, try == partitionLockTries-1); !store.IsLockTimeout(err) {
			return n, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(store.PartitionLockWait):
		}
	}
	return 0, store.AsLockBusy(err)
}

// partitionLockTries is how many times the prune tries for its locks,
// store.PartitionLockWait apart, before it gives up (models.ErrLockBusy).
const partitionLockTries = 10

func (db *Store) prunePartitionedOnce(ctx context.Context, before time.Time, queue bool) (int64, error) {
	var n int64
	err := db.inUTC(ctx, func(tx *gorm.DB) error {
		// NOWAIT: a prune queued for the lock would queue every ingest
		// behind it; it tries again store.PartitionLockWait later instead, and
		// queues for store.LockQueueWait only on its last try.
		lock := "LOCK TABLE " + strings.Join(usageTables, ", ") + " IN ACCESS EXCLUSIVE MODE NOWAIT"
		if queue {
			lock = strings.TrimSuffix(lock, " NOWAIT")
		}
		for _, q := range []string{fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", store.LockQueueWait.Milliseconds()), lock,
			fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", store.PartitionLockWait.Milliseconds())} {
			if err := tx.Exec(q).Error; err != nil {
				return err
			}
		}
		for _, table := range usageTables {
			parts, err := usagePartitions(tx, table)
			if err != nil {
				return err
			}
			var estimate int64
			for _, p := range parts {
				if models.PartitionDroppable(p.To, before) && table == "gpu_usage_minutes" {
					var est float64
					if err := tx.Raw("SELECT GREATEST(reltuples, 0) FROM pg_class WHERE oid = CAST(? AS regclass)", p.Name).Scan(&est).Error; err != nil {
						return err
					}
					estimate += int64(est)
				}
			}
			_, deleted, err := prunePartitions(tx, table, before)
			if err != nil {
				return err
			}
			if table == "gpu_usage_minutes" {
				n = deleted + estimate
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: prune usage: %w", err)
	}
	return n, nil
}
