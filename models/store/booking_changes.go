package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// The changes below follow one pattern: inside one transaction, lock and
// read the booking, ask the pure rule in models whether the change is
// allowed at now, write bookings and booking_gpus together (the exclusion
// constraint and the SQLite triggers only see booking_gpus, so its range must
// always equal the booking's), and write the audit event.

// CancelBooking cancels a booking that has not started: it stays in the
// record as cancelled and stops holding its GPUs.
func (db *DB) CancelBooking(ctx context.Context, id int64, actor *models.User, now time.Time) (*models.Booking, error) {
	return db.changeBooking(ctx, id, func(tx *gorm.DB, b *models.Booking) error {
		if err := models.CheckCancel(b, actor, now); err != nil {
			return err
		}
		if err := cancelHold(tx, b, now); err != nil {
			return err
		}
		// Who cancelled: the report charges the owner's own late
		// cancellations (lateCancelSQL), not an admin's.
		// UpdateColumn: updated_at stays the caller's now (Update would
		// stamp the wall clock).
		if err := tx.Model(&bookingRow{}).Where("id = ?", b.ID).UpdateColumn("cancelled_by", actor.ID).Error; err != nil {
			return fmt.Errorf("store: cancel booking %d: %w", b.ID, err)
		}
		return auditBooking(tx, actor, models.AuditBookingCancel, b, nil)
	})
}

// ExtendBooking moves the end of an upcoming or active booking later when
// the GPUs are free until then. Otherwise the ECONFLICT names the bookings
// in the way and Msg.Data["FreeUntil"] says how far it could go. As with
// CreateBooking, SQLite runs the check and the update under BEGIN IMMEDIATE,
// and on PostgreSQL the exclusion constraint refuses the loser of a race,
// whose error is then explained the same way.
func (db *DB) ExtendBooking(ctx context.Context, id int64, actor *models.User, newEnd time.Time, lim models.BookingLimits, now time.Time) (*models.Booking, error) {
	b, err := db.changeBooking(ctx, id, func(tx *gorm.DB, b *models.Booking) error {
		end, err := models.CheckExtend(b, actor, newEnd, lim, now)
		if err != nil {
			return err
		}
		if err := checkExtendPolicy(tx, b, end, lim, now); err != nil {
			return err // the booking policy, as for a new booking (policy_input.go)
		}
		cs, err := conflicts(tx, b.GPUIDs, b.EndsAt, end, b.ID)
		if err != nil {
			return err
		}
		if len(cs) > 0 {
			return models.ExtendConflictError(b, cs)
		}
		if err := setBookingEnd(tx, b, end, nil, now); err != nil {
			return err
		}
		return auditBooking(tx, actor, models.AuditBookingExtend, b, map[string]any{"old_ends_at": b.EndsAt, "ends_at": end})
	})
	if isOverlap(err) {
		return nil, db.explainExtend(ctx, id, newEnd, err)
	}
	return b, err
}

// UpdateBookingNote replaces the note of an upcoming or active booking.
// The signature has no clock, so "past" is judged by the wall clock.
func (db *DB) UpdateBookingNote(ctx context.Context, id int64, actor *models.User, note string, lim models.BookingLimits, now time.Time) (*models.Booking, error) {
	return db.changeBooking(ctx, id, func(tx *gorm.DB, b *models.Booking) error {
		clean, err := models.CheckNote(b, actor, note, lim, now)
		if err != nil {
			return err
		}
		err = tx.Model(&bookingRow{}).Where("id = ?", id).Updates(map[string]any{"note": clean, "updated_at": utc(now)}).Error
		if err != nil {
			return fmt.Errorf("store: update booking note: %w", err)
		}
		return auditBooking(tx, actor, models.AuditBookingEditNote, b, map[string]any{"old_note": b.Note, "note": clean})
	})
}

// changeBooking runs change on the locked booking id in one transaction and
// returns the booking as committed.
func (db *DB) changeBooking(ctx context.Context, id int64, change func(tx *gorm.DB, b *models.Booking) error) (*models.Booking, error) {
	if err := db.inBookingTx(ctx, id, change); err != nil {
		return nil, err
	}
	return db.Booking(ctx, id)
}

// inBookingTx runs change on the locked booking id in one transaction;
// an overlap comes back as the database's error, for the caller to explain.
// The locks come in the order every writer takes them (locks.go): the
// owner's row, its GPUs' rows, then the booking's.
func (db *DB) inBookingTx(ctx context.Context, id int64, change func(tx *gorm.DB, b *models.Booking) error) error {
	err := db.inTxRetrying(ctx, func(tx *gorm.DB) error {
		if err := lockOwner(tx, id); err != nil {
			return err
		}
		if err := lockBookingGPUs(tx, id); err != nil {
			return err
		}
		b, err := bookingByID(tx, id, true)
		if err != nil {
			return err
		}
		return change(tx, b)
	})
	if isOverlap(err) {
		return err
	}
	if err != nil {
		return mapErr(err, "booking")
	}
	return nil
}

// setBookingEnd moves b's end, in bookings and booking_gpus alike, and
// restamps the usage minutes between the old end and the new.
func setBookingEnd(tx *gorm.DB, b *models.Booking, end time.Time, extra map[string]any, now time.Time) error {
	set := map[string]any{"ends_at": utc(end), "updated_at": utc(now)}
	for k, v := range extra {
		set[k] = v
	}
	if err := tx.Model(&bookingRow{}).Where("id = ?", b.ID).Updates(set).Error; err != nil {
		return err
	}
	if err := tx.Model(&bookingGPURow{}).Where("booking_id = ?", b.ID).Update("ends_at", utc(end)).Error; err != nil {
		return err
	}
	return restampBooking(tx, b.GPUIDs, b.EndsAt, end, now)
}

// cancelHold cancels b: it stays on record but holds its GPUs no more.
func cancelHold(tx *gorm.DB, b *models.Booking, now time.Time) error {
	err := tx.Model(&bookingRow{}).Where("id = ?", b.ID).Updates(map[string]any{"status": models.StatusCancelled, "updated_at": utc(now),
		"cancelled_at": utc(now)}).Error
	if err != nil {
		return fmt.Errorf("store: cancel booking %d: %w", b.ID, err)
	}
	if err := tx.Model(&bookingGPURow{}).Where("booking_id = ?", b.ID).Update("blocking", false).Error; err != nil {
		return fmt.Errorf("store: cancel booking gpus %d: %w", b.ID, err)
	}
	return restampBooking(tx, b.GPUIDs, b.StartsAt, b.EndsAt, now)
}

// auditBooking records a change to b by actor. The event's actor is who
// acted; details carry the owner, so an admin acting on someone else's
// booking is on record with both ids.
func auditBooking(tx *gorm.DB, actor *models.User, action string, b *models.Booking, details map[string]any) error {
	return audit(tx, models.ActorFor(actor, ""), action, "booking", b.ID, bookingAuditDetails(actor, b, details))
}

// bookingAuditDetails adds the owner, the GPUs and the start of b to an
// event's details, and the actor when it is not the owner.
func bookingAuditDetails(actor *models.User, b *models.Booking, details map[string]any) map[string]any {
	if details == nil {
		details = map[string]any{}
	}
	details["user_id"] = b.UserID
	details["gpu_ids"] = b.GPUIDs
	details["starts_at"] = b.StartsAt
	if actor != nil && actor.ID != b.UserID {
		details["actor_id"] = actor.ID
		details["as_admin"] = actor.IsAdmin
	}
	return details
}

// explainExtend turns the database's refusal of an extension into the same
// answer the application check gives, read after the winner committed.
func (db *DB) explainExtend(ctx context.Context, id int64, newEnd time.Time, cause error) error {
	b, err := db.Booking(ctx, id)
	if err != nil {
		return errors.Join(cause, err)
	}
	cs, err := conflicts(db.Gorm.WithContext(ctx), b.GPUIDs, b.EndsAt, utc(newEnd), b.ID)
	if err != nil {
		return errors.Join(cause, err)
	}
	ce := models.ExtendConflictError(b, cs)
	ce.Err = cause
	return ce
}

// maxSlotBusyRows bounds the one query FindSlots runs over booking_gpus.
const maxSlotBusyRows = 100000

// FindSlots answers the find-a-slot question: it validates q, loads the GPUs
// and the blocking bookings that may overlap the search window (two bounded
// queries, whatever the number of bookings) and lets models.FindSlots decide.
func (db *DB) FindSlots(ctx context.Context, q models.SlotQuery, lim models.BookingLimits, now time.Time) ([]models.Slot, error) {
	gpus, err := db.GPUs(ctx)
	if err != nil {
		return nil, err
	}
	if q, err = models.ValidateSlotQuery(q, gpus, lim, now); err != nil {
		return nil, err
	}
	from := models.SlotSearchStart(q, lim, now)
	to := now.UTC().Add(lim.MaxAhead).Add(q.Duration)
	var rows []bookingGPURow
	err = db.Gorm.WithContext(ctx).Model(&bookingGPURow{}).
		Where("blocking AND ends_at > ? AND starts_at < ?", utc(from), utc(to).Add(time.Second)).
		Order("gpu_id, starts_at").Limit(maxSlotBusyRows).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: find slots: %w", err)
	}
	busy := make([]models.Booking, len(rows))
	for i, r := range rows {
		busy[i] = models.Booking{ID: r.BookingID, GPUIDs: []int64{r.GPUID}, StartsAt: r.StartsAt.UTC(), EndsAt: r.EndsAt.UTC(),
			Status: models.StatusConfirmed}
	}
	return models.FindSlots(gpus, busy, q, lim, now), nil
}
