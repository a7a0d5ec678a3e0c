package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

type usageRow struct {
	GPUID       int64     `gorm:"column:gpu_id;primaryKey;autoIncrement:false"`
	Minute      time.Time `gorm:"column:minute;primaryKey"`
	UtilAvgPct  *float64  `gorm:"column:util_avg_pct"`
	UtilMaxPct  *float64  `gorm:"column:util_max_pct"`
	MemUsedMiB  int64     `gorm:"column:mem_used_mib"`
	MemTotalMiB int64     `gorm:"column:mem_total_mib"`
	Samples     int       `gorm:"column:samples"`
	// Stamps for the reports (usage_stamps.go).
	BookingID    *int64 `gorm:"column:booking_id"`
	BookerMemMiB int64  `gorm:"column:booker_mem_mib"`
	TopMemMiB    int64  `gorm:"column:top_mem_mib"`
	UnixMinute   int64  `gorm:"column:unix_minute"`
}

func (usageRow) TableName() string { return "gpu_usage_minutes" }

type userUsageRow struct {
	GPUID     int64     `gorm:"column:gpu_id;primaryKey;autoIncrement:false"`
	Minute    time.Time `gorm:"column:minute;primaryKey"`
	UserName  string    `gorm:"column:user_name;primaryKey"`
	UserID    *int64    `gorm:"column:user_id"`
	UID       int       `gorm:"column:uid"`
	MemoryMiB int64     `gorm:"column:memory_mib"`
	Processes int       `gorm:"column:processes"`
	Busy      bool      `gorm:"column:busy"`
	Booked    bool      `gorm:"column:booked"` // stamp: this user was the booker
}

func (userUsageRow) TableName() string { return "gpu_user_usage_minutes" }

// insertChunk keeps one INSERT under SQLite's 32766 bound variables.
const insertChunk = 1000

// nodeGPUIDs maps the UUIDs a node names to its GPU IDs. A UUID of another
// node is a 403; one nobody knows is a 409 (the agent reports its inventory
// before anything else, so this means a broken agent or a GPU swapped
// since the agent started).
func (db *DB) nodeGPUIDs(tx *gorm.DB, nodeID int64, uuids []string) (map[string]int64, error) {
	var rows []gpuRow
	if err := tx.Model(&gpuRow{}).Select("id, node_id, uuid").Where("uuid IN ?", uuids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: gpu ids: %w", err)
	}
	ids := make(map[string]int64, len(rows))
	for _, r := range rows {
		if r.NodeID != nodeID {
			return nil, models.ErrForeignGPU(r.UUID)
		}
		ids[r.UUID] = r.ID
	}
	for _, u := range uuids {
		if _, ok := ids[u]; !ok {
			return nil, models.NewError(models.ECONFLICT, models.M("err.agent_unknown_gpu", "UUID", u))
		}
	}
	return ids, nil
}

func recordUUIDs(recs []wire.UsageRecord) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range recs {
		if !seen[r.GPUUUID] {
			seen[r.GPUUUID] = true
			out = append(out, r.GPUUUID)
		}
	}
	return out
}

// recordUsers lists the distinct user names of recs.
func recordUsers(recs []wire.UsageRecord) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range recs {
		for _, u := range r.Users {
			if !seen[u.User] {
				seen[u.User] = true
				out = append(out, u.User)
			}
		}
	}
	return out
}

// IngestUsage stores a usage batch with INSERT … ON CONFLICT DO NOTHING on
// the (GPU, minute) and (GPU, minute, user) keys, so that a resend, in part
// or whole, never counts twice. The batch is one transaction: refused (a
// foreign GPU, a bad minute) means nothing written.
func (db *DB) IngestUsage(ctx context.Context, nodeID int64, b wire.UsageBatch, retention time.Duration, now time.Time) (models.UsageResult, error) {
	var res models.UsageResult
	if err := models.AgentError(b.Validate()); err != nil {
		return res, err
	}
	names, err := db.unixNames(ctx, recordUsers(b.Records))
	if err != nil {
		return res, err
	}
	var rows []usageRow
	var users []userUsageRow
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ids, err := db.nodeGPUIDs(tx, nodeID, recordUUIDs(b.Records))
		if err != nil {
			return err
		}
		lo, hi := batchWindow(b.Records)
		holders, err := usageHolders(tx, mapValues(ids), lo, hi)
		if err != nil {
			return err
		}
		for _, r := range b.Records {
			verdict, err := models.CheckUsageRecord(r, now, retention)
			if err != nil {
				return err
			}
			if verdict == models.UsageStale {
				res.Stale++
				continue
			}
			row, urows := usageRows(ids[r.GPUUUID], r, names, holders)
			rows, users = append(rows, row), append(users, urows...)
		}
		if len(rows) == 0 {
			return nil
		}
		ins := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&rows, insertChunk)
		if ins.Error != nil {
			return ins.Error
		}
		res.Inserted = int(ins.RowsAffected)
		if len(users) == 0 {
			return nil
		}
		uins := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&users, insertChunk)
		if uins.Error != nil {
			return uins.Error
		}
		if res.Inserted < len(rows) && uins.RowsAffected > 0 {
			// A resend brought user rows for minutes stored before: their
			// stamps were taken without them.
			return restampUsage(tx, mapValues(ids), lo, hi)
		}
		return nil
	})
	if err != nil {
		return models.UsageResult{}, mapErr(err, "usage")
	}
	res.Duplicates = len(rows) - res.Inserted
	return res, nil
}

// usageRows turns one record into its stamped rows.
func usageRows(gid int64, r wire.UsageRecord, names map[string]int64, holders []models.UsageHolder) (usageRow, []userUsageRow) {
	m := utc(r.Minute)
	stamped := make([]models.StampedUser, len(r.Users))
	for i, u := range r.Users {
		stamped[i] = models.StampedUser{UserID: names[u.User], MemoryMiB: u.MemoryMiB}
	}
	st := models.StampMinute(holders, gid, m, stamped)
	row := usageRow{GPUID: gid, Minute: m, UtilAvgPct: r.UtilAvgPct, UtilMaxPct: r.UtilMaxPct, MemUsedMiB: r.MemUsedMiB,
		MemTotalMiB: r.MemTotalMiB, Samples: r.Samples, BookerMemMiB: st.BookerMemMiB, TopMemMiB: st.TopMemMiB, UnixMinute: m.Unix() / 60}
	if st.BookingID != 0 {
		row.BookingID = &st.BookingID
	}
	users := make([]userUsageRow, len(r.Users))
	for i, u := range r.Users {
		users[i] = userUsageRow{GPUID: gid, Minute: m, UserName: clip(u.User, 256), UID: u.UID, MemoryMiB: u.MemoryMiB,
			Processes: u.Processes, Busy: u.Busy, Booked: stamped[i].Booked}
		if id := stamped[i].UserID; id != 0 {
			users[i].UserID = &id
		}
	}
	return row, users
}

// batchWindow is [first minute, last minute + 1 min) of recs.
func batchWindow(recs []wire.UsageRecord) (time.Time, time.Time) {
	if len(recs) == 0 {
		return time.Time{}, time.Time{}
	}
	lo, hi := recs[0].Minute, recs[0].Minute
	for _, r := range recs {
		if r.Minute.Before(lo) {
			lo = r.Minute
		}
		if r.Minute.After(hi) {
			hi = r.Minute
		}
	}
	return lo, hi.Add(time.Minute)
}

func mapValues(m map[string]int64) []int64 {
	out := make([]int64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// PruneUsage deletes the usage of minutes before before, user rows first.
// On PostgreSQL it drops whole day partitions instead (usage_partitions.go).
func (db *DB) PruneUsage(ctx context.Context, before time.Time) (int64, error) {
	if db.Dialect == Postgres {
		return db.prunePartitioned(ctx, before)
	}
	var n int64
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Where("minute < ?", utc(before)).Delete(&userUsageRow{})
		if r.Error != nil {
			return r.Error
		}
		r = tx.Where("minute < ?", utc(before)).Delete(&usageRow{})
		n = r.RowsAffected
		return r.Error
	})
	if err != nil {
		return 0, fmt.Errorf("store: prune usage: %w", err)
	}
	return n, nil
}

// usageSince reads the stored minutes of gpuIDs from since on, for the
// live status page and the idle rule.
func (db *DB) usageSince(ctx context.Context, gpuIDs []int64, since time.Time) ([]models.UsageMinute, error) {
	q := db.Gorm.WithContext(ctx).Model(&usageRow{}).Where("minute >= ?", utc(since))
	if gpuIDs != nil {
		q = q.Where("gpu_id IN ?", gpuIDs)
	}
	var rows []usageRow
	if err := q.Order("gpu_id, minute").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: usage since: %w", err)
	}
	out := make([]models.UsageMinute, len(rows))
	for i, r := range rows {
		out[i] = models.UsageMinute{GPUID: r.GPUID, Minute: r.Minute.UTC(), UtilAvgPct: r.UtilAvgPct, UtilMaxPct: r.UtilMaxPct,
			MemUsedMiB: r.MemUsedMiB, MemTotalMiB: r.MemTotalMiB, Samples: r.Samples}
	}
	return out, nil
}

// userUsageSince reads per-user minutes of gpuIDs (nil: all) from since on.
func (db *DB) userUsageSince(ctx context.Context, gpuIDs []int64, since time.Time) ([]models.UserMinute, error) {
	q := db.Gorm.WithContext(ctx).Model(&userUsageRow{}).Where("minute >= ?", utc(since))
	if gpuIDs != nil {
		q = q.Where("gpu_id IN ?", gpuIDs)
	}
	var rows []userUsageRow
	if err := q.Order("gpu_id, minute, user_name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: user usage since: %w", err)
	}
	out := make([]models.UserMinute, len(rows))
	for i, r := range rows {
		out[i] = models.UserMinute{GPUID: r.GPUID, Minute: r.Minute.UTC(), UserName: r.UserName, UID: r.UID, MemoryMiB: r.MemoryMiB,
			Processes: r.Processes, Busy: r.Busy}
		if r.UserID != nil {
			out[i].UserID = *r.UserID
		}
	}
	return out, nil
}
