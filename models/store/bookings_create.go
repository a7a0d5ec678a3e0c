package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// CreateBooking validates req, evaluates the booking policy and inserts the
// booking in one transaction. Overlaps are the database's to refuse (the
// PostgreSQL exclusion constraint, the SQLite triggers, inside a BEGIN
// IMMEDIATE transaction there); the refusal is then explained with the
// bookings in the way. The booking returned is built from what the
// transaction read and wrote, so that nothing is read back. Should the
// bookings in the way be gone by the time the refusal is explained (one
// cancelled in that instant), the booking is tried once more rather than
// answered with a conflict that names nobody.
func (db *DB) CreateBooking(ctx context.Context, req models.NewBooking, lim models.BookingLimits, now time.Time, by models.Actor) (*models.Booking, error) {
	b, err := db.createBooking(ctx, req, lim, now, by)
	if !isOverlap(err) {
		return b, err
	}
	if retry, ce := db.explainOverlap(ctx, req, err); !retry {
		return nil, ce
	}
	if b, err = db.createBooking(ctx, req, lim, now, by); !isOverlap(err) {
		return b, err
	}
	_, ce := db.explainOverlap(ctx, req, err)
	return nil, ce
}

// createBooking is one try of CreateBooking; an overlap is returned as the
// database's error, unexplained.
func (db *DB) createBooking(ctx context.Context, req models.NewBooking, lim models.BookingLimits, now time.Time, by models.Actor) (*models.Booking, error) {
	var b *models.Booking
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// One statement reads the GPUs, the user (locking their row on
		// PostgreSQL) and the policy; what they hold is read after it.
		r, err := readPolicy(tx, req.UserID, req.GPUIDs, lim, true)
		if err != nil {
			return err
		}
		if req, err = models.ValidateNewBooking(req, r.gpus, lim, now); err != nil {
			return err
		}
		breaches, err := evaluate(tx, req, r, now) // on data read in this tx
		if err != nil {
			return err
		}
		if len(breaches) > 0 {
			return models.PolicyError(breaches)
		}
		u, gpus := r.user, r.gpus
		g := gpus[req.GPUIDs[0]]
		ev, err := newAuditRow(by, models.AuditBookingCreate, "booking", 0, map[string]any{
			"gpu_ids": req.GPUIDs, "starts_at": req.StartsAt, "ends_at": req.EndsAt, "user_id": req.UserID})
		if err != nil {
			return err
		}
		id, err := insertNewBooking(tx, db.Dialect, req, g.NodeID, now, ev)
		if err != nil {
			return err
		}
		if err := restampBooking(tx, req.GPUIDs, req.StartsAt, req.EndsAt, now); err != nil {
			return err // usage already stored in its range (only within the clock skew of now)
		}
		b = &models.Booking{ID: id, UserID: req.UserID, NodeID: g.NodeID, GPUIDs: req.GPUIDs, StartsAt: utc(req.StartsAt),
			EndsAt: utc(req.EndsAt), Note: req.Note, Kind: models.KindStandard, Status: models.StatusConfirmed,
			CreatedAt: utc(now), UpdatedAt: utc(now), UserName: u.Name, UserEmail: u.Email, NodeName: g.NodeName}
		return nil
	})
	if isOverlap(err) {
		return nil, err
	}
	if err != nil {
		return nil, mapErr(err, "booking")
	}
	return b, nil
}

// newBookingPG inserts a standard booking, its GPU rows and its audit event
// (whose target is the new id) in one statement: one round trip.
const newBookingPG = `WITH b AS (
	INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, 'standard', 'confirmed', ?, ?) RETURNING id
), g AS (
	INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking)
	SELECT b.id, x.gpu_id, ?, ?, TRUE FROM b, unnest(CAST(? AS bigint[])) AS x(gpu_id)
), a AS (
	INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
	SELECT ?, ?, ?, ?, ?, CAST(b.id AS text), ?, ? FROM b
)
SELECT id FROM b`

// insertNewBooking writes a standard booking for req, its GPU rows and the
// audit event ev (its target id filled in): one statement on PostgreSQL,
// three plain ones on SQLite, where a statement costs no round trip.
func insertNewBooking(tx *gorm.DB, dialect string, req models.NewBooking, nodeID int64, now time.Time, ev auditRow) (int64, error) {
	start, end, at := utc(req.StartsAt), utc(req.EndsAt), utc(now)
	var id int64
	if dialect == Postgres {
		err := tx.Raw(newBookingPG, req.UserID, nodeID, start, end, req.Note, at, at,
			start, end, pgIDArray(req.GPUIDs),
			ev.At, ev.ActorID, ev.ActorLabel, ev.Action, ev.TargetType, ev.Details, ev.IP).Row().Scan(&id)
		return id, err
	}
	err := tx.Raw(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 'standard', 'confirmed', ?, ?) RETURNING id`, req.UserID, nodeID, start, end, req.Note, at, at).Row().Scan(&id)
	if err != nil {
		return 0, err
	}
	values := strings.Repeat("(?, ?, ?, ?, TRUE), ", len(req.GPUIDs))
	args := make([]any, 0, 4*len(req.GPUIDs))
	for _, g := range req.GPUIDs {
		args = append(args, id, g, start, end)
	}
	if err := tx.Exec("INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking) VALUES "+
		strings.TrimSuffix(values, ", "), args...).Error; err != nil {
		return 0, err
	}
	err = tx.Exec(`INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ev.At, ev.ActorID, ev.ActorLabel, ev.Action, ev.TargetType, strconv.FormatInt(id, 10), ev.Details, ev.IP).Error
	if err != nil {
		return 0, fmt.Errorf("store: audit %s: %w", ev.Action, err)
	}
	return id, nil
}

// pgIDArray writes ids as a PostgreSQL array literal ("{1,2,3}"), so that a
// list travels as one parameter.
func pgIDArray(ids []int64) string {
	b := make([]byte, 0, 2+8*len(ids))
	b = append(b, '{')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, '}'))
}

// explainOverlap turns the database's refusal into a conflict that names the
// bookings in the way, read after the winner committed. retry is set when
// it names nobody (the bookings in the way are gone already), so that
// another try may pass.
func (db *DB) explainOverlap(ctx context.Context, req models.NewBooking, cause error) (retry bool, err error) {
	cs, err := conflicts(db.Gorm.WithContext(ctx), req.GPUIDs, utc(req.StartsAt), utc(req.EndsAt), 0)
	if err != nil {
		return false, errors.Join(cause, err)
	}
	ce := models.ConflictError(cs)
	ce.Err = cause
	return len(cs) == 0, ce
}
