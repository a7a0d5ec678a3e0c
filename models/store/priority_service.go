package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// PendingRequestsOnGPU lists the pending requests that ask for the GPU and
// have not ended, for the out-of-service confirmation page: an approval of
// one of them is refused once the GPU is out, so the admin should know.
func (db *DB) PendingRequestsOnGPU(ctx context.Context, gpuID int64, now time.Time) ([]models.PriorityRequest, error) {
	var g gpuRow
	tx := db.Gorm.WithContext(ctx)
	if err := tx.Take(&g, "id = ?", gpuID).Error; err != nil {
		return nil, mapErr(err, "GPU")
	}
	var rows []requestRow
	if err := requestQuery(tx).Where("r.node_id = ? AND r.status = ? AND r.ends_at > ?", g.NodeID, models.RequestPending, utc(now)).
		Order("r.starts_at, r.id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: pending requests on gpu: %w", err)
	}
	var out []models.PriorityRequest
	for _, row := range rows {
		if r := row.model(); slices.Contains(r.GPUIDs, gpuID) {
			out = append(out, r)
		}
	}
	return out, nil
}

// requireInService refuses an approval whose GPUs are not all in service:
// a GPU taken out while the request waited must not get a confirmed
// booking (the booking form and the API refuse the same booking). It runs
// after the GPUs are locked, so an admin taking one out waits for it.
func requireInService(tx *gorm.DB, ids []int64) error {
	var rows []gpuRow
	if err := tx.Where("id IN ?", ids).Order("idx").Find(&rows).Error; err != nil {
		return fmt.Errorf("store: gpus in service: %w", err)
	}
	gpus := make([]models.GPU, len(rows))
	for i, r := range rows {
		gpus[i] = r.model()
	}
	return models.RequireInService(gpus, ids)
}
