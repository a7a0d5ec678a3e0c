package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
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
	Container string    `gorm:"column:container"`
}

func (userUsageRow) TableName() string { return "gpu_user_usage_minutes" }

// insertChunk keeps one INSERT under SQLite's 32766 bound variables.
const insertChunk = 1000

// usageGPUsSQL reads the GPUs of the UUIDs ? (a list).
var usageGPUsSQL = listSQL("SELECT id, node_id, uuid FROM gpus WHERE uuid IN ?")

// nodeGPUIDs maps the UUIDs a node names to its GPU IDs. A UUID of another
// node is a 403; one nobody knows is a 409 (the agent reports its inventory
// before anything else, so this means a broken agent or a GPU swapped
// since the agent started). Every agent batch reads them, so the read
// runs without GORM (raw_sql.go).
func (db *DB) nodeGPUIDs(tx *gorm.DB, nodeID int64, uuids []string) (map[string]int64, error) {
	conn := rawTx(tx)
	list, err := conn.listArg(uuids)
	if err != nil {
		return nil, fmt.Errorf("store: gpu ids: %w", err)
	}
	rows, err := queryAll(conn, usageGPUsSQL, func(r *sql.Rows) (g gpuRow, err error) {
		err = r.Scan(&g.ID, &g.NodeID, &g.UUID)
		return g, err
	}, list)
	if err != nil {
		return nil, fmt.Errorf("store: gpu ids: %w", err)
	}
	return batchGPUIDs(nodeID, uuids, rows)
}

// batchGPUIDs maps the UUIDs a batch names to the ids of rows, the GPUs read
// for them: refused when one is another node's or none of the cluster's.
func batchGPUIDs(nodeID int64, uuids []string, rows []gpuRow) (map[string]int64, error) {
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
			Processes: r.Processes, Busy: r.Busy, Container: r.Container}
		if r.UserID != nil {
			out[i].UserID = *r.UserID
		}
	}
	return out, nil
}
