package telemetry

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

func mapValues(m map[string]int64) []int64 {
	out := make([]int64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// PruneUsage deletes the usage of minutes before before, user rows first.
// On PostgreSQL it drops whole day partitions instead (usage_partitions.go).
func (db *Store) PruneUsage(ctx context.Context, before time.Time) (int64, error) {
	if db.st.Dialect == store.Postgres {
		return db.prunePartitioned(ctx, before)
	}
	var n int64
	err := db.st.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Where("minute < ?", store.UTC(before)).Delete(&store.UserUsageRow{})
		if r.Error != nil {
			return r.Error
		}
		r = tx.Where("minute < ?", store.UTC(before)).Delete(&store.UsageRow{})
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
func (db *Store) usageSince(ctx context.Context, gpuIDs []int64, since time.Time) ([]models.UsageMinute, error) {
	q := db.st.Gorm.WithContext(ctx).Model(&store.UsageRow{}).Where("minute >= ?", store.UTC(since))
	if gpuIDs != nil {
		q = store.WhereIDIn(q, "gpu_id", gpuIDs)
	}
	var rows []store.UsageRow
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
func (db *Store) userUsageSince(ctx context.Context, gpuIDs []int64, since time.Time) ([]models.UserMinute, error) {
	q := db.st.Gorm.WithContext(ctx).Model(&store.UserUsageRow{}).Where("minute >= ?", store.UTC(since))
	if gpuIDs != nil {
		q = store.WhereIDIn(q, "gpu_id", gpuIDs)
	}
	var rows []store.UserUsageRow
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
