package store

import (
	"context"
	"strconv"

	"github.com/gpubook/gpubook/models"
)

// BookingHistory reads, in one query, the cancellations, releases,
// pre-emptions and service changes of the bookings ids, oldest first.
func (db *DB) BookingHistory(ctx context.Context, ids []int64) (map[int64][]models.BookingEvent, error) {
	out := map[int64][]models.BookingEvent{}
	if len(ids) == 0 {
		return out, nil
	}
	targets := make([]string, len(ids))
	for i, id := range ids {
		targets[i] = strconv.FormatInt(id, 10)
	}
	var rows []auditRow
	err := db.Gorm.WithContext(ctx).Where("target_type = ? AND target_id IN ? AND action IN ?", "booking", targets, models.BookingHistoryActions).
		Order("at, id").Find(&rows).Error
	if err != nil {
		return nil, mapErr(err, "audit event")
	}
	for _, r := range rows {
		if ev, ok := models.BookingEventOf(r.model()); ok {
			out[ev.BookingID] = append(out[ev.BookingID], ev)
		}
	}
	return out, nil
}
