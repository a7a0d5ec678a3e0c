package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// GPUServicePlan lists the future and running bookings on a GPU with the
// move each could take, for the admin's confirmation page.
func (db *DB) GPUServicePlan(ctx context.Context, gpuID int64, now time.Time) ([]models.ServiceChoice, error) {
	plan, _, err := servicePlan(db.Gorm.WithContext(ctx), gpuID, now, false)
	return plan, mapErr(err, "GPU")
}

// servicePlan reads the bookings on gpu that have not ended (locked when
// lock is set), the node's GPUs and busy bookings, and plans.
func servicePlan(tx *gorm.DB, gpuID int64, now time.Time, lock bool) ([]models.ServiceChoice, *models.GPU, error) {
	var gr gpuRow
	if err := tx.Take(&gr, "id = ?", gpuID).Error; err != nil {
		return nil, nil, err
	}
	g := gr.model()
	var ids []int64
	if err := tx.Table("booking_gpus").Where("gpu_id = ? AND blocking AND ends_at > ?", gpuID, utc(now)).
		Distinct().Order("booking_id").Pluck("booking_id", &ids).Error; err != nil {
		return nil, nil, fmt.Errorf("store: bookings on gpu: %w", err)
	}
	if len(ids) == 0 {
		return nil, &g, nil
	}
	var on []models.Booking
	from, to := now, now
	for _, id := range ids {
		b, err := bookingByID(tx, id, lock)
		if err != nil {
			return nil, nil, err
		}
		on = append(on, *b)
		from, to = minTime(from, b.StartsAt), maxTime(to, b.EndsAt)
	}
	gpus, err := nodeGPUs(tx, g.NodeID)
	if err != nil {
		return nil, nil, err
	}
	busy, err := nodeBusy(tx, g.NodeID, from, to)
	if err != nil {
		return nil, nil, err
	}
	return models.PlanService(gpuID, on, gpus, busy, now), &g, nil
}

// TakeGPUOutOfService takes the GPU out of service and does to each booking
// on it what decide says (ServiceMove or ServiceCancel), auditing each and
// telling its holder in the app and by email, all in one transaction. A
// booking without a decision, or a move no longer possible, means the
// calendar changed since the admin's page: nothing is done.
func (db *DB) TakeGPUOutOfService(ctx context.Context, gpuID int64, reason string, decide map[int64]string, actor *models.User, now time.Time, mail models.NotificationMailer) error {
	if err := models.ValidateServiceReason(&reason); err != nil {
		return err
	}
	err := db.inTxRetrying(ctx, func(tx *gorm.DB) error { // its moves insert bookings
		// Every GPU of the node first (locks.go), before the bookings it
		// moves: a booking may go to any of them.
		if err := lockNodeGPUsOf(tx, gpuID); err != nil {
			return err
		}
		plan, g, err := servicePlan(tx, gpuID, now, true)
		if err != nil {
			return err
		}
		names, err := gpuNames(tx, g.NodeID)
		if err != nil {
			return err
		}
		for _, c := range plan {
			if err := serviceBooking(tx, c, decide[c.Booking.ID], names[gpuID], names, reason, models.ActorFor(actor, ""), actor, now, mail); err != nil {
				return err
			}
		}
		if err := tx.Model(&gpuRow{}).Where("id = ?", gpuID).Updates(map[string]any{"in_service": false, "out_of_service_reason": reason, "updated_at": utc(now)}).Error; err != nil {
			return err
		}
		return audit(tx, models.ActorFor(actor, ""), models.AuditGPUService, "gpu", gpuID, map[string]any{"in_service": false, "reason": reason, "bookings": len(plan)})
	})
	return mapErr(err, "GPU")
}

// serviceBooking moves or cancels one booking as decided, audits it (by
// who did it; actor, the admin, when there is one) and tells its holder.
func serviceBooking(tx *gorm.DB, c models.ServiceChoice, action, gpuName string, names map[int64]string, reason string, by models.Actor, actor *models.User, now time.Time, mail models.NotificationMailer) error {
	b := c.Booking
	newGPU := ""
	switch {
	case action == models.ServiceMove && c.CanMove():
		if err := moveBooking(tx, &b, c.Moves, now); err != nil {
			return fmt.Errorf("store: move booking %d: %w", b.ID, err)
		}
		newGPU = names[c.Moves[0].To]
	case action == models.ServiceCancel && b.StartsAt.After(now):
		if err := cancelHold(tx, &b, now); err != nil {
			return err
		}
	case action == models.ServiceCancel:
		if err := setBookingEnd(tx, &b, now, nil, now); err != nil {
			return fmt.Errorf("store: end booking %d: %w", b.ID, err)
		}
	default:
		return models.NewError(models.ECONFLICT, models.M("admin.service.changed"))
	}
	details := bookingAuditDetails(actor, &b, map[string]any{"action": action, "reason": reason, "new_gpu": newGPU})
	if err := audit(tx, by, models.AuditBookingService, "booking", b.ID, details); err != nil {
		return err
	}
	n := models.ServiceNotification(c, action, gpuName, newGPU, reason, now)
	if err := addNotification(tx, n); err != nil {
		return err
	}
	if mail == nil {
		return nil
	}
	owner, err := userInTx(tx, b.UserID)
	if err != nil {
		return err
	}
	m, err := mail(n, owner)
	if err != nil {
		return fmt.Errorf("store: render service notice: %w", err)
	}
	m.DedupKey = n.DedupKey
	_, err = enqueueMail(tx, m)
	return err
}

// gpuNames names the node's GPUs as people read them: "node-a GPU 2", and
// a MIG instance by its GPU and profile, as the calendar does:
// "node-a GPU 0 · 1g.10gb".
func gpuNames(tx *gorm.DB, nodeID int64) (map[int64]string, error) {
	var rows []struct {
		ID   int64    `gorm:"column:id"`
		Node string   `gorm:"column:name"`
		Unit unitCols `gorm:"embedded"`
	}
	if err := tx.Table("gpus g").Select("g.id, n.name, "+unitSQL).
		Joins("JOIN nodes n ON n.id = g.node_id").Joins("LEFT JOIN gpus p ON p.id = g.parent_id").
		Where("g.node_id = ?", nodeID).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: gpu names: %w", err)
	}
	out := map[int64]string{}
	for _, r := range rows {
		out[r.ID] = r.Node + " " + r.Unit.name()
	}
	return out, nil
}
