package telemetry

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/wire"
)

// RecordViolations stores a violation batch in one transaction; a GPU or
// booking of another node refuses the whole batch.
func (db *Store) RecordViolations(ctx context.Context, nodeID int64, b wire.ViolationBatch, now time.Time) error {
	if err := models.AgentError(b.Validate()); err != nil {
		return err
	}
	var uuids, users []string // each named once: a batch names at most a node's GPUs, and few users
	for _, v := range b.Violations {
		if !slices.Contains(uuids, v.GPUUUID) {
			uuids = append(uuids, v.GPUUUID)
		}
		if v.User != "" && !slices.Contains(users, v.User) {
			users = append(users, v.User)
		}
	}
	names, err := db.st.UnixNameIDs(ctx, users)
	if err != nil {
		return err
	}
	err = db.bulkTx(ctx, func(tx *gorm.DB, l *rowLoader) error {
		ids, err := store.NodeGPUIDs(tx, nodeID, uuids)
		if err != nil {
			return err
		}
		if err := store.NodeBookings(tx, nodeID, violationBookings(b.Violations)); err != nil {
			return err
		}
		if !repeatedViolation(b.Violations) {
			return upsertViolations(l, nodeID, b.Violations, ids, names, now)
		}
		for i := range b.Violations { // in order, one statement each (agent_violations_json.go)
			if err := upsertViolations(l, nodeID, b.Violations[i:i+1], ids, names, now); err != nil {
				return err
			}
		}
		return nil
	})
	return store.MapErr(err, "violation")
}

// RecordIdle stores idle reports and returns, per booking, the batch's
// reports nobody was warned of yet (models.IdleToWarn). The booking and
// every GPU must be the node's. Only the newest report of each booking is
// read back in full: a batch names one booking hundreds of times at most,
// and reading every report back cost more memory than the batch itself.
func (db *Store) RecordIdle(ctx context.Context, nodeID int64, b wire.IdleBatch, now time.Time) ([]models.IdleToWarn, error) {
	if err := models.AgentError(b.Validate()); err != nil {
		return nil, err
	}
	var uuids []string
	seen := map[string]bool{}
	bookings := make([]int64, len(b.Reports))
	for i, r := range b.Reports {
		for _, u := range r.GPUUUIDs {
			if !seen[u] {
				seen[u] = true
				uuids = append(uuids, u)
			}
		}
		bookings[i] = r.BookingID
	}
	order := idleKeyOrder(b.Reports)
	write := func(tx *gorm.DB, l *rowLoader) error {
		if _, err := store.NodeGPUIDs(tx, nodeID, uuids); err != nil {
			return err
		}
		if err := store.NodeBookings(tx, nodeID, bookings); err != nil {
			return err
		}
		if !repeatedIdle(b.Reports) {
			return upsertIdleReports(l, nodeID, b.Reports, order, now)
		}
		for k := range order { // in order, one statement each (agent_idle_json.go)
			if err := upsertIdleReports(l, nodeID, b.Reports, order[k:k+1], now); err != nil {
				return err
			}
		}
		return nil
	}
	// Rows are locked in key order; what PostgreSQL may still find is run again.
	err := store.RetryDeadlock(func() error { return db.bulkTx(ctx, write) })
	if err != nil {
		return nil, store.MapErr(err, "idle report")
	}
	return db.idleToWarn(ctx, nodeID, slices.Compact(slices.Sorted(slices.Values(bookings))))
}

// idleToWarn groups the node's un-warned, unreleased reports of bookings by
// booking, newest first, and reads the newest of each in full. It looks
// them up by booking, not by the batch's keys: a batch's keys are up to
// 500 texts of 256 bytes, which PostgreSQL's driver encoded again as
// parameters; a report of an earlier batch the owner was not warned of
// yet is marked with the rest.
func (db *Store) idleToWarn(ctx context.Context, nodeID int64, bookings []int64) ([]models.IdleToWarn, error) {
	rows, err := db.st.Gorm.WithContext(ctx).Table("agent_idle_reports").Select("id, booking_id").
		Where("node_id = ? AND warned_at IS NULL AND released_at IS NULL AND booking_id IN ?", nodeID, bookings).
		Order("reported_at DESC, id DESC").Rows()
	if err != nil {
		return nil, fmt.Errorf("store: idle reports to warn: %w", err)
	}
	defer rows.Close()
	var out []models.IdleToWarn
	at := map[int64]int{} // booking → its index in out
	for rows.Next() {
		var id, booking int64
		if err := rows.Scan(&id, &booking); err != nil {
			return nil, fmt.Errorf("store: idle reports to warn: %w", err)
		}
		i, ok := at[booking]
		if !ok {
			i, at[booking] = len(out), len(out)
			out = append(out, models.IdleToWarn{Report: models.IdleReport{ID: id}})
		}
		out[i].IDs = append(out[i].IDs, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: idle reports to warn: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	newest := make([]int64, len(out))
	for i, w := range out {
		newest[i] = w.Report.ID
	}
	full, err := db.idleReports(ctx, func(q *gorm.DB) *gorm.DB { return q.Where("i.id IN ?", newest) })
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]models.IdleReport, len(full))
	for _, r := range full {
		byID[r.ID] = r
	}
	for i := range out {
		out[i].Report = byID[out[i].Report.ID]
	}
	return out, nil
}

// MarkIdle records that the owner was warned and/or the booking released.
func (db *Store) MarkIdle(ctx context.Context, reportID int64, warned, released bool, now time.Time) error {
	return db.MarkIdleReports(ctx, []int64{reportID}, warned, released, now)
}

// MarkIdleReports is MarkIdle for several reports with one statement.
// The IDs (up to a batch's 500) are bound as one list (an array, or JSON
// on SQLite), not one parameter each, which cost the heap about 250
// bytes per ID.
func (db *Store) MarkIdleReports(ctx context.Context, reportIDs []int64, warned, released bool, now time.Time) error {
	var set []string
	if warned {
		set = append(set, "warned_at = @now")
	}
	if released {
		set = append(set, "released_at = @now")
	}
	if len(set) == 0 || len(reportIDs) == 0 {
		return nil
	}
	ids := store.PGIDArray(reportIDs)
	// The rows are locked first, in the order RecordIdle stores them in
	// (idleKeyOrder), so that marking and storing the reports of one
	// booking at once queue instead of deadlocking; the planner looks
	// each ID up in the primary key.
	in := `id IN (SELECT id FROM agent_idle_reports WHERE id = ANY(CAST(@ids AS bigint[]))
ORDER BY node_id, agent_key COLLATE "C" ` + store.WriterLock + ")"
	if db.st.Dialect != store.Postgres {
		// SQLite has no arrays: the same list as JSON.
		ids = "[" + ids[1:len(ids)-1] + "]"
		in = "id IN (SELECT value FROM json_each(@ids))"
	}
	err := store.RetryDeadlock(func() error {
		return db.st.Gorm.WithContext(ctx).Exec("UPDATE agent_idle_reports SET "+strings.Join(set, ", ")+" WHERE "+in,
			sql.Named("now", store.UTC(now)), sql.Named("ids", ids)).Error
	})
	return store.MapErr(err, "idle report")
}

// IdleReleaseDue applies models.IdleReleaseDue to the node's open reports,
// reading the stored minutes of their GPUs since the earliest report.
func (db *Store) IdleReleaseDue(ctx context.Context, nodeID int64, pol models.IdlePolicy, now time.Time) ([]models.IdleReport, error) {
	if !pol.AutoRelease {
		return nil, nil
	}
	open, err := db.idleReports(ctx, func(q *gorm.DB) *gorm.DB {
		return q.Where("i.node_id = ? AND i.released_at IS NULL AND b.ends_at > ? AND b.status = ?", nodeID, store.UTC(now), models.StatusConfirmed)
	})
	if err != nil || len(open) == 0 {
		return nil, err
	}
	var gpuIDs []int64
	since := now
	for _, r := range open {
		gpuIDs = append(gpuIDs, r.GPUIDs...)
		if m := r.ReportedAt.Truncate(time.Minute); m.Before(since) {
			since = m
		}
	}
	idle, err := db.idleMinutes(ctx, gpuIDs, since, pol)
	if err != nil {
		return nil, err
	}
	var due []models.IdleReport
	for _, r := range open {
		if models.IdleReleaseDue(pol, r, idle, now) {
			due = append(due, r)
		}
	}
	return due, nil
}

// idleMinutes maps GPU → minute → idle for the stored minutes since since.
func (db *Store) idleMinutes(ctx context.Context, gpuIDs []int64, since time.Time, pol models.IdlePolicy) (map[int64]map[time.Time]bool, error) {
	usage, err := db.usageSince(ctx, gpuIDs, since)
	if err != nil {
		return nil, err
	}
	users, err := db.userUsageSince(ctx, gpuIDs, since)
	if err != nil {
		return nil, err
	}
	type key struct {
		gpu int64
		m   time.Time
	}
	busy := map[key]int{}
	for _, u := range users {
		if u.Processes > 0 {
			busy[key{u.GPUID, u.Minute}]++
		}
	}
	out := map[int64]map[time.Time]bool{}
	for _, u := range usage {
		if out[u.GPUID] == nil {
			out[u.GPUID] = map[time.Time]bool{}
		}
		out[u.GPUID][u.Minute] = models.IdleMinuteOf(u, busy[key{u.GPUID, u.Minute}], pol)
	}
	return out, nil
}
