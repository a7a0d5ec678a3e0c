package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// MapUnixName gives the Unix account name, whose use the reports charge to
// nobody, to user userID in one step: it becomes one of the user's extra
// names through SetUnixLogin (validated, refused when another user owns
// it, audited as user.unix), and the stored user rows of that name that
// belong to nobody are moved to the user and their minutes restamped, so
// the week in progress counts them at once and a closed week from its
// next recompute. It returns how many user rows (GPU-minutes) moved.
func (db *DB) MapUnixName(ctx context.Context, name string, userID int64, by models.Actor) (int64, error) {
	u, err := db.User(ctx, userID)
	if err != nil {
		return 0, err
	}
	x, err := db.UnixIdentity(ctx, userID)
	if err != nil {
		return 0, err
	}
	if err := db.SetUnixLogin(ctx, userID, models.WithUnixExtra(x, *u, name), by); err != nil {
		return 0, err
	}
	var moved int64
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		moved, err = claimUnixUsage(tx, name, userID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: map unix name: %w", err)
	}
	return moved, nil
}

// claimUnixUsage moves the user rows of name that belong to nobody to
// userID and restamps their minutes (the booker's memory, the booked flag,
// the rollups marked dirty) on the GPUs and range they cover.
func claimUnixUsage(tx *gorm.DB, name string, userID int64) (int64, error) {
	edge := func(order string) ([]time.Time, error) {
		var t []time.Time
		err := tx.Model(&userUsageEdge{}).Select("minute").Where("user_name = ? AND user_id IS NULL", name).
			Order("minute "+order).Limit(1).Pluck("minute", &t).Error
		return t, err
	}
	first, err := edge("ASC")
	if err != nil || len(first) == 0 {
		return 0, err
	}
	last, err := edge("DESC")
	if err != nil || len(last) == 0 {
		return 0, err
	}
	var gpus []int64
	if err := tx.Raw("SELECT DISTINCT gpu_id FROM gpu_user_usage_minutes WHERE user_name = ? AND user_id IS NULL", name).
		Scan(&gpus).Error; err != nil {
		return 0, err
	}
	r := tx.Exec("UPDATE gpu_user_usage_minutes SET user_id = ? WHERE user_name = ? AND user_id IS NULL", userID, name)
	if r.Error != nil {
		return 0, r.Error
	}
	return r.RowsAffected, restampUsage(tx, gpus, first[0], last[0].Add(time.Minute))
}

// userUsageEdge reads the minute column of gpu_user_usage_minutes.
type userUsageEdge struct {
	Minute time.Time `gorm:"column:minute"`
}

func (userUsageEdge) TableName() string { return "gpu_user_usage_minutes" }
