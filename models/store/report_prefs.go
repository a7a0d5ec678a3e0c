package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// ReportEmailOptOuts returns the users who stopped the weekly email; their
// report stays in the portal.
func (db *DB) ReportEmailOptOuts(ctx context.Context) (map[int64]bool, error) {
	var ids []int64
	if err := db.Gorm.WithContext(ctx).Table("users").Where("NOT report_email").Pluck("id", &ids).Error; err != nil {
		return nil, fmt.Errorf("store: report opt-outs: %w", err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// ReportEmail reports whether the user receives the weekly email.
func (db *DB) ReportEmail(ctx context.Context, userID int64) (bool, error) {
	var on []bool
	if err := db.Gorm.WithContext(ctx).Table("users").Where("id = ?", userID).Pluck("report_email", &on).Error; err != nil {
		return false, fmt.Errorf("store: report email: %w", err)
	}
	if len(on) == 0 {
		return false, mapErr(gorm.ErrRecordNotFound, "user")
	}
	return on[0], nil
}

// SetReportEmail starts or stops the user's weekly email.
func (db *DB) SetReportEmail(ctx context.Context, userID int64, on bool) error {
	res := db.Gorm.WithContext(ctx).Table("users").Where("id = ?", userID).Update("report_email", on)
	if res.Error != nil {
		return fmt.Errorf("store: set report email: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return mapErr(gorm.ErrRecordNotFound, "user")
	}
	return nil
}
