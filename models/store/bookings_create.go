package store

import (
	"context"
	"database/sql"
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
// A try that PostgreSQL aborted as a deadlock's victim (two conflicting
// bookings inserted at the same instant) is tried again (retryDeadlock).
func (db *DB) CreateBooking(ctx context.Context, req models.NewBooking, lim models.BookingLimits, now time.Time, by models.Actor) (*models.Booking, error) {
	var b *models.Booking
	err := retryDeadlock(func() (err error) {
		b, err = db.createBooking(ctx, req, lim, now, by)
		return err
	})
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
	ctx, err := uncancelled(ctx)
	if err != nil {
		return nil, mapErr(err, "booking")
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
		g := r.gpus[req.GPUIDs[0]]
		ev, err := newAuditRow(by, models.AuditBookingCreate, "booking", 0, bookingEventDetails{
			GPUIDs: req.GPUIDs, StartsAt: req.StartsAt, EndsAt: &req.EndsAt, UserID: req.UserID})
		if err != nil {
			return err
		}
		id, stored, err := insertNewBooking(rawTx(tx), req, g.NodeID, now, ev)
		if err != nil {
			return err
		}
		if stored { // usage already stored in its range (only within the clock skew of now)
			if err := restampBooking(tx, req.GPUIDs, req.StartsAt, req.EndsAt, now); err != nil {
				return err
			}
		}
		b = newBookingModel(id, req, r, now)
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
// (whose target is the new id) in one statement, one round trip, and says
// whether usage is stored on the GPUs in the range the last two
// parameters give (restampRange), which then needs restamping.
var newBookingPG = newRawSQL(`WITH b AS (
	INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, 'standard', 'confirmed', ?, ?) RETURNING id
), g AS (
	INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking)
	SELECT b.id, x.gpu_id, ?, ?, TRUE FROM b, unnest(CAST(? AS bigint[])) AS x(gpu_id)
), a AS (
	INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
	SELECT ?, ?, ?, ?, ?, CAST(b.id AS text), ?, ? FROM b
)
SELECT id, EXISTS (SELECT 1 FROM gpu_usage_minutes WHERE gpu_id = ANY(CAST(? AS bigint[])) AND minute >= ? AND minute < ?) FROM b`)

// The same on SQLite, where a statement costs no round trip: three, the
// GPU rows' insert probing the usage stored on each.
var (
	newBookingSQLite = newRawSQL(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 'standard', 'confirmed', ?, ?)`)
	newBookingGPU1 = newBookingGPUs(1)
)

// newBookingGPUs inserts n GPU rows of a booking, each returning whether
// usage is stored on its GPU in the range of the last two parameters.
func newBookingGPUs(n int) rawSQL {
	return newRawSQL("INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking) VALUES " +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, TRUE), ", n), ", ") +
		" RETURNING EXISTS (SELECT 1 FROM gpu_usage_minutes m WHERE m.gpu_id = booking_gpus.gpu_id AND m.minute >= ? AND m.minute < ?)")
}

// insertNewBooking writes a standard booking for req, its GPU rows and the
// audit event ev (its target id filled in), without GORM (raw_sql.go), and
// says whether usage is stored in the booking's range (restampRange), for
// the caller to restamp.
func insertNewBooking(conn raw, req models.NewBooking, nodeID int64, now time.Time, ev auditRow) (id int64, stored bool, err error) {
	start, end, at := utc(req.StartsAt), utc(req.EndsAt), utc(now)
	from, to, ok := restampRange(req.StartsAt, req.EndsAt, now)
	if !ok { // nothing can be stored: probe an empty range
		from, to = start, start
	}
	from, to = utc(from), utc(to)
	if conn.dialect == Postgres {
		ids := pgIDArray(req.GPUIDs)
		err := conn.queryRow(newBookingPG, req.UserID, nodeID, start, end, req.Note, at, at, start, end, ids,
			ev.At, ev.ActorID, ev.ActorLabel, ev.Action, ev.TargetType, ev.Details, ev.IP, ids, from, to).Scan(&id, &stored)
		return id, stored, err
	}
	res, err := conn.exec(newBookingSQLite, req.UserID, nodeID, start, end, req.Note, at, at)
	if err != nil {
		return 0, false, err
	}
	if id, err = res.LastInsertId(); err != nil { // no RETURNING: SQLite keeps its rows in a table of their own
		return 0, false, err
	}
	gpuSQL := newBookingGPU1
	if len(req.GPUIDs) != 1 {
		gpuSQL = newBookingGPUs(len(req.GPUIDs))
	}
	args := make([]any, 0, 4*len(req.GPUIDs)+2)
	for _, g := range req.GPUIDs {
		args = append(args, id, g, start, end)
	}
	if stored, err = anyRowTrue(conn.query(gpuSQL, append(args, from, to)...)); err != nil {
		return 0, false, err
	}
	_, err = conn.exec(auditInsertSQL, ev.At, ev.ActorID, ev.ActorLabel, ev.Action, ev.TargetType, strconv.FormatInt(id, 10), ev.Details, ev.IP)
	if err != nil {
		return 0, false, fmt.Errorf("store: audit %s: %w", ev.Action, err)
	}
	return id, stored, nil
}

// newBookingModel is the booking req made with id, from what the policy
// read r read (the user, the GPUs): nothing is read back.
func newBookingModel(id int64, req models.NewBooking, r policyRead, now time.Time) *models.Booking {
	g := r.gpus[req.GPUIDs[0]]
	uuids := make([]string, len(req.GPUIDs))
	for i, id := range req.GPUIDs {
		uuids[i] = r.gpus[id].UUID
	}
	return &models.Booking{ID: id, UserID: req.UserID, NodeID: g.NodeID, GPUIDs: req.GPUIDs, StartsAt: utc(req.StartsAt),
		EndsAt: utc(req.EndsAt), Note: req.Note, Kind: models.KindStandard, Status: models.StatusConfirmed,
		CreatedAt: utc(now), UpdatedAt: utc(now), UserName: r.user.Name, UserEmail: r.user.Email, NodeName: g.NodeName, GPUUUIDs: uuids}
}

// anyRowTrue reads rows of one boolean and says whether one was true.
func anyRowTrue(rows *sql.Rows, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var v bool
		if err := rows.Scan(&v); err != nil {
			return false, err
		}
		found = found || v
	}
	return found, rows.Err()
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
