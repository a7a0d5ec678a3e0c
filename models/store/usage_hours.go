package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// Hourly usage rollups (migration 00018, models/usage_hours.go). RollUsage
// is the job; reportRollups and reportSQL read what it wrote. Which hours
// are complete, due, dirty and read from where are the pure functions of
// models; this file is their SQL.

// rollupLockKey is the PostgreSQL advisory lock between the roll job
// (exclusive) and writers of minutes in rolled hours (shared: the trigger
// usage_mark_late and markRollupDirty). Its number is the migration's.
const rollupLockKey = 7300018

// rollupState is the row of usage_rollup_state.
type rollupState struct {
	RolledTo    int64     `gorm:"column:rolled_to"`
	RolledAt    time.Time `gorm:"column:rolled_at"`
	BusyUtilPct float64   `gorm:"column:busy_util_pct"`
	// Generation moves with every change to the rolled hours (migration
	// 00033): what a replica read from them holds while it has not moved.
	Generation int64 `gorm:"column:generation"`
}

// RollResult says what one RollUsage did.
type RollResult struct {
	Rolled   int   // new hours summed
	Rerolled int   // hours summed again because their minutes changed
	RolledTo int64 // the watermark after the run (models.UnixHour)
}

// readRollupState reads the state row; ok is false before the first roll.
func readRollupState(g *gorm.DB) (st rollupState, ok bool, err error) {
	err = g.Table("usage_rollup_state").Where("id = 1").Take(&st).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("store: rollup state: %w", err)
	}
	return st, true, nil
}

// readDirtyHours reads the hours that changed since they were rolled.
func readDirtyHours(g *gorm.DB) ([]models.HourRange, error) {
	var rows []struct {
		Lo time.Time `gorm:"column:lo"`
		Hi time.Time `gorm:"column:hi"`
	}
	if err := g.Table("usage_rollup_dirty").Select("lo, hi").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: rollup dirty hours: %w", err)
	}
	out := make([]models.HourRange, len(rows))
	for i, r := range rows {
		out[i] = models.TouchedHours(r.Lo.UTC(), r.Hi.UTC())
	}
	return models.MergeHours(out), nil
}

// markRollupDirty records that the minutes of [from, to) changed, when the
// job has rolled any hour of them (a restamp after a booking change).
func markRollupDirty(tx *gorm.DB, from, to time.Time) error {
	if tx.Dialector.Name() == Postgres {
		if err := tx.Exec("SELECT pg_advisory_xact_lock_shared(?)", rollupLockKey).Error; err != nil {
			return fmt.Errorf("store: rollup lock: %w", err)
		}
	}
	q := reportSQL{pg: tx.Dialector.Name() == Postgres}
	err := tx.Exec("INSERT INTO usage_rollup_dirty (lo, hi) SELECT "+q.timeArg("lo")+", "+q.timeArg("hi")+
		" WHERE "+q.timeArg("lo")+" < (SELECT rolled_at FROM usage_rollup_state WHERE id = 1) ON CONFLICT DO NOTHING",
		map[string]any{"lo": utc(from), "hi": utc(to)}).Error
	if err != nil {
		return fmt.Errorf("store: mark rollup dirty: %w", err)
	}
	return nil
}

// RollUsage sums every complete hour not yet rolled, and again every rolled
// hour whose minutes changed since (late minutes, restamps), at the busy
// threshold busyUtil. keepFrom is the start of the minutes' retention: an
// hour that begins before it has lost minutes, so its sums are kept as they
// are. A changed threshold rolls again every hour whose minutes are kept;
// older hours keep the sums of the threshold they were rolled with. Each
// batch of hours is its own transaction; the run goes on until it has
// caught up or ctx ends.
func (db *DB) RollUsage(ctx context.Context, now, keepFrom time.Time, busyUtil float64) (RollResult, error) {
	var res RollResult
	for {
		var due models.HourRange
		err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			var err error
			due, err = db.rollBatch(tx, now, keepFrom, busyUtil, &res)
			return err
		})
		if err != nil {
			return res, AsLockBusy(err)
		}
		if due.From == due.To || due.To >= models.CompleteBefore(now) {
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
}

// rollBatch is one transaction of RollUsage: the dirty hours, then the
// next batch of due hours, then the watermark.
func (db *DB) rollBatch(tx *gorm.DB, now, keepFrom time.Time, busyUtil float64, res *RollResult) (models.HourRange, error) {
	if db.Dialect == Postgres {
		if err := takeRollupLock(tx); err != nil {
			return models.HourRange{}, err
		}
	}
	st, rolled, err := readRollupState(tx)
	if err != nil {
		return models.HourRange{}, err
	}
	keep := models.UnixHour(keepFrom) + 1
	if rolled && st.BusyUtilPct != busyUtil {
		rolled = false // roll again what is kept, at the new threshold
	}
	summed := false
	if rolled {
		dirty, err := readDirtyHours(tx)
		if err != nil {
			return models.HourRange{}, err
		}
		for _, h := range models.ClipHours(dirty, keep, st.RolledTo) {
			if err := rollHours(tx, h, busyUtil); err != nil {
				return models.HourRange{}, err
			}
			res.Rerolled += int(h.To - h.From)
			summed = true
		}
	}
	if err := tx.Exec("DELETE FROM usage_rollup_dirty").Error; err != nil {
		return models.HourRange{}, fmt.Errorf("store: rollup dirty: %w", err)
	}
	oldest, err := oldestMinute(tx)
	if err != nil {
		return models.HourRange{}, err
	}
	due := models.RollupDue(st.RolledTo, rolled, oldest, now)
	if !rolled && due.From < keep && !oldest.IsZero() {
		due = models.RollupDue(keep, true, time.Time{}, now)
	}
	if due.From < due.To {
		if err := rollHours(tx, due, busyUtil); err != nil {
			return models.HourRange{}, err
		}
		res.Rolled += int(due.To - due.From)
		summed = true
	}
	res.RolledTo = due.To
	return due, saveRollupState(tx, due.To, busyUtil, now, summed)
}

// rollupLockWait is how long the roll job tries for its lock before it
// gives up with models.ErrLockBusy (the runner tries again in 30 s).
const rollupLockWait = 2 * time.Second

// takeRollupLock takes the roll job's exclusive lock for the transaction.
// It polls with pg_try_advisory_xact_lock rather than queueing: an
// exclusive request that waits in PostgreSQL's queue makes every later
// shared request wait behind it, and each usage INSERT takes one (the
// trigger usage_mark_late), so a roll waiting on one long ingest stalled
// all ingest. The rest of the batch's locks give up after
// PartitionLockWait instead of queueing.
func takeRollupLock(tx *gorm.DB) error {
	if err := tx.Exec(fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", PartitionLockWait.Milliseconds())).Error; err != nil {
		return fmt.Errorf("store: rollup lock: %w", err)
	}
	ctx := tx.Statement.Context
	for deadline := time.Now().Add(rollupLockWait); ; {
		var got bool
		if err := tx.Raw("SELECT pg_try_advisory_xact_lock(?)", rollupLockKey).Scan(&got).Error; err != nil {
			return fmt.Errorf("store: rollup lock: %w", err)
		}
		if got {
			return nil
		}
		if time.Now().After(deadline) {
			return queueRollupLock(tx)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// queueRollupLock is the roll's last try, queued for LockQueueWait at
// most, so that ingest at a steady rate, whose shared locks may overlap
// without a gap, cannot starve the roll: ingest waits that long at most.
func queueRollupLock(tx *gorm.DB) error {
	for _, q := range []string{fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", LockQueueWait.Milliseconds()),
		fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", rollupLockKey),
		fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", PartitionLockWait.Milliseconds())} {
		if err := tx.Exec(q).Error; err != nil {
			return fmt.Errorf("store: rollup lock held elsewhere for %v: %w", rollupLockWait, AsLockBusy(err))
		}
	}
	return nil
}

// oldestMinute is the first stored minute (zero: none), on the minute index.
func oldestMinute(tx *gorm.DB) (time.Time, error) {
	var rows []UsageRow
	if err := tx.Model(&UsageRow{}).Select("minute").Order("minute").Limit(1).Find(&rows).Error; err != nil {
		return time.Time{}, fmt.Errorf("store: oldest usage minute: %w", err)
	}
	if len(rows) == 0 {
		return time.Time{}, nil
	}
	return rows[0].Minute.UTC(), nil
}

// saveRollupState writes the watermark; summed says the batch changed the
// rolled hours, which moves their generation.
func saveRollupState(tx *gorm.DB, rolledTo int64, busyUtil float64, now time.Time, summed bool) error {
	bump := 0
	if summed {
		bump = 1
	}
	err := tx.Exec(`INSERT INTO usage_rollup_state (id, rolled_to, rolled_at, busy_util_pct, updated_at, generation) VALUES (1, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET rolled_to = excluded.rolled_to, rolled_at = excluded.rolled_at,
		busy_util_pct = excluded.busy_util_pct, updated_at = excluded.updated_at,
		generation = usage_rollup_state.generation + excluded.generation`,
		rolledTo, models.HourStart(rolledTo), busyUtil, utc(now), bump).Error
	if err != nil {
		return fmt.Errorf("store: save rollup state: %w", err)
	}
	return nil
}

// rollHours replaces the sums of hours h with those of their minutes now.
func rollHours(tx *gorm.DB, h models.HourRange, busyUtil float64) error {
	q := reportSQL{pg: tx.Dialector.Name() == Postgres, rules: models.ReportRules{BusyUtilPct: busyUtil}}
	args := map[string]any{"ha": h.From, "hb": h.To, "from": models.HourStart(h.From), "to": models.HourStart(h.To)}
	for _, s := range []string{
		"DELETE FROM usage_hours WHERE unix_hour >= @ha AND unix_hour < @hb",
		"DELETE FROM user_usage_hours WHERE unix_hour >= @ha AND unix_hour < @hb",
		"DELETE FROM unix_usage_hours WHERE unix_hour >= @ha AND unix_hour < @hb",
		q.rollGPUHoursSQL(args),
		q.rollUserHoursSQL(),
		q.rollUnixHoursSQL(),
	} {
		if err := tx.Exec(s, args).Error; err != nil {
			return fmt.Errorf("store: roll usage hours: %w", err)
		}
	}
	return nil
}

// rollGPUHoursSQL sums the GPU-minutes of [@from, @to) per hour, GPU and
// booking with report_sql.go's minute predicates, so that a sum is exactly
// what minutesSQL counts over the same minutes.
func (q reportSQL) rollGPUHoursSQL(args map[string]any) string {
	count := func(pred string) string { return "SUM(CASE WHEN " + pred + " THEN 1 ELSE 0 END)" }
	counted := "(m.util_avg_pct >= @busy_util OR m.top_mem_mib > 0)"
	return "INSERT INTO usage_hours (unix_hour, gpu_id, booking_id, minutes, counted, busy, held, nodata, anyone, unbooked," +
		" util_n, util_sum, busy_util_n, busy_util_sum)" +
		" SELECT m.unix_minute / 60, m.gpu_id, COALESCE(m.booking_id, 0), COUNT(*), " + count(counted) + ", " +
		count(q.busyMinute(args)) + ", " + count(q.heldIdleMinute(args)) + ", " + count(q.noUserDataMinute(args)) + ", " +
		count(q.clusterBusyMinute(args)) + ", " + count("x.gpu_id IS NOT NULL") + ", " + q.utilSums(args) +
		" FROM gpu_usage_minutes m LEFT JOIN (SELECT u.gpu_id, u.minute FROM gpu_user_usage_minutes u" +
		" WHERE u.minute >= @from AND u.minute < @to AND u.user_id IS NOT NULL AND NOT u.booked GROUP BY u.gpu_id, u.minute) x" +
		" ON x.gpu_id = m.gpu_id AND x.minute = m.minute WHERE m.minute >= @from AND m.minute < @to GROUP BY 1, 2, 3"
}

// rollUserHoursSQL sums the mapped user rows of [@from, @to) per hour, GPU,
// user and the booking that held the GPU that minute.
func (q reportSQL) rollUserHoursSQL() string {
	return "INSERT INTO user_usage_hours (unix_hour, gpu_id, user_id, booking_id, minutes, unbooked)" +
		" SELECT m.unix_minute / 60, u.gpu_id, u.user_id, COALESCE(m.booking_id, 0), COUNT(*), SUM(CASE WHEN NOT u.booked THEN 1 ELSE 0 END)" +
		" FROM gpu_user_usage_minutes u JOIN gpu_usage_minutes m ON m.gpu_id = u.gpu_id AND m.minute = u.minute" +
		" WHERE u.minute >= @from AND u.minute < @to AND m.minute >= @from AND m.minute < @to AND u.user_id IS NOT NULL" +
		" GROUP BY 1, 2, 3, 4"
}

// rollUnixHoursSQL sums the user rows of [@from, @to) that map to no
// gpubook user per hour, GPU and Unix name: the use charged to nobody.
func (q reportSQL) rollUnixHoursSQL() string {
	return "INSERT INTO unix_usage_hours (unix_hour, gpu_id, user_name, minutes)" +
		" SELECT m.unix_minute / 60, u.gpu_id, u.user_name, COUNT(*)" +
		" FROM gpu_user_usage_minutes u JOIN gpu_usage_minutes m ON m.gpu_id = u.gpu_id AND m.minute = u.minute" +
		" WHERE u.minute >= @from AND u.minute < @to AND m.minute >= @from AND m.minute < @to AND u.user_id IS NULL" +
		" GROUP BY 1, 2, 3"
}

// UsageRolledTo is the end of the hours rolled so far (the zero time
// before the first roll): the minutes before it may be pruned.
func (db *DB) UsageRolledTo(ctx context.Context) (time.Time, error) {
	st, ok, err := readRollupState(db.Gorm.WithContext(ctx))
	if err != nil || !ok {
		return time.Time{}, err
	}
	return models.HourStart(st.RolledTo), nil
}

// PruneUsageHours deletes the hourly sums of hours that began before
// before (GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS).
func (db *DB) PruneUsageHours(ctx context.Context, before time.Time) (int64, error) {
	h := models.UnixHour(before)
	var n int64
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var gone int64
		for _, table := range []string{"user_usage_hours", "unix_usage_hours", "usage_hours"} {
			r := tx.Exec("DELETE FROM "+table+" WHERE unix_hour < ?", h)
			if r.Error != nil {
				return r.Error
			}
			gone, n = gone+r.RowsAffected, r.RowsAffected
		}
		if gone == 0 {
			return nil
		}
		// Pruned hours are a change of the rolled hours (rollupState.Generation).
		return tx.Exec("UPDATE usage_rollup_state SET generation = generation + 1 WHERE id = 1").Error
	})
	if err != nil {
		return 0, fmt.Errorf("store: prune usage hours: %w", err)
	}
	return n, nil
}

// reportPlanner reads, inside the report's snapshot, what the rollups
// cover, and returns the planner of any window: the rollups of the hours
// rolled at the rules' busy threshold and not dirty, the minutes of the
// rest (all minutes when the threshold differs from the rolled one).
// rolledTo is the end of the hours rolled at that threshold (0: none).
func reportPlanner(g *gorm.DB, busyUtil float64) (planner func([]models.Span) models.UsageReadPlan, rolledTo int64, err error) {
	st, ok, err := readRollupState(g)
	if err != nil {
		return nil, 0, err
	}
	var dirty []models.HourRange
	if ok && st.BusyUtilPct == busyUtil {
		if dirty, err = readDirtyHours(g); err != nil {
			return nil, 0, err
		}
	} else {
		st.RolledTo = 0
	}
	return func(spans []models.Span) models.UsageReadPlan {
		return models.PlanUsageRead(spans, st.RolledTo, dirty)
	}, st.RolledTo, nil
}
