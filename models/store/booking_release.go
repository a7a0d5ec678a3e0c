package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// releaseReadSQL reads a booking to release in one statement: its row,
// its owner's name and email, its node's name, and one row per GPU with
// the GPU's UUID and whether usage is stored on it between the booking's
// start and both its end and the parameter (now plus the clock skew
// allowed): when none is, the release restamps nothing (usage_stamps.go)
// and the probe costs no statement of its own. On PostgreSQL the booking's
// row is locked by the statement that reads it.
const releaseReadSQL = `SELECT b.id, b.user_id, b.node_id, b.starts_at, b.ends_at, b.note, b.kind, b.status, b.released_at,
	b.created_at, b.updated_at, u.name, u.email, n.name, bg.gpu_id, g.uuid,
	EXISTS (SELECT 1 FROM gpu_usage_minutes m WHERE m.gpu_id = bg.gpu_id AND m.minute >= b.starts_at
		AND m.minute < b.ends_at AND m.minute < ?)
	FROM bookings b JOIN users u ON u.id = b.user_id JOIN nodes n ON n.id = b.node_id
	LEFT JOIN booking_gpus bg ON bg.booking_id = b.id LEFT JOIN gpus g ON g.id = bg.gpu_id
	WHERE b.id = ? ORDER BY bg.gpu_id`

var releaseRead = rawSQL{sqlite: releaseReadSQL, postgres: DollarParams(releaseReadSQL + " FOR UPDATE OF b")}

// The release's writes: the booking (cancelled when released in its first
// second, its end moved to now otherwise), its GPU rows (no longer
// blocking, or ending now) and the audit event. On PostgreSQL they are one
// statement, one round trip.
var (
	releaseBookingSQL = newRawSQL(`UPDATE bookings SET ends_at = ?, released_at = ?, updated_at = ? WHERE id = ?`)
	releaseGPUsSQL    = newRawSQL(`UPDATE booking_gpus SET ends_at = ? WHERE booking_id = ?`)
	// Released in its first second: the end stays, so that SQLite need not
	// rewrite the three indexes on it.
	cancelBookingSQL = newRawSQL(`UPDATE bookings SET status = 'cancelled', released_at = ?, updated_at = ? WHERE id = ?`)
	cancelGPUsSQL    = newRawSQL(`UPDATE booking_gpus SET blocking = FALSE WHERE booking_id = ?`)
	auditInsertSQL   = newRawSQL(`INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	releasePG = newRawSQL(`WITH b AS (
	UPDATE bookings SET status = ?, ends_at = ?, released_at = ?, updated_at = ? WHERE id = ?
), g AS (
	UPDATE booking_gpus SET blocking = ?, ends_at = ? WHERE booking_id = ?
)
INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
)

// ReleaseBooking ends an active booking now, so that its GPUs are free at
// once; released in its first second, it is cancelled and frees its whole
// range. The booking returned is the one read under the lock with the
// columns the release wrote, so that nothing is read back after the commit.
// Its statements run without GORM (raw_sql.go): the GPUs' lock (PostgreSQL
// only), the read, then the writes — four on SQLite, one on PostgreSQL.
// Unlike the other changes it does not lock the owner's row first: a
// release only frees, so no rule judged against what the owner holds can
// be passed wrongly.
// A release that PostgreSQL aborted as a deadlock's victim (its shortened
// range checked against a booking being inserted into the old one) is
// tried again (retryDeadlock).
func (db *DB) ReleaseBooking(ctx context.Context, id int64, actor *models.User, now time.Time) (*models.Booking, error) {
	var b *models.Booking
	err := retryDeadlock(func() (err error) {
		b, err = db.releaseBooking(ctx, id, actor, now)
		return err
	})
	return b, err
}

// releaseBooking is one try of ReleaseBooking.
func (db *DB) releaseBooking(ctx context.Context, id int64, actor *models.User, now time.Time) (*models.Booking, error) {
	var done *models.Booking
	ctx, err := uncancelled(ctx)
	if err != nil {
		return nil, mapErr(err, "booking")
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockBookingGPUs(tx, id); err != nil { // the GPUs before the booking, as every writer
			return err
		}
		conn := rawTx(tx)
		b, usage, err := readForRelease(conn, id, now)
		if err != nil {
			return err
		}
		if err := models.CheckRelease(b, actor, now); err != nil {
			return err
		}
		oldEnd, err := writeRelease(conn, b, actor, now)
		if err != nil {
			return err
		}
		if usage { // minutes stored in the range the release changed: restamp them
			from := oldEnd // to the new end
			if b.Status == models.StatusCancelled {
				from = b.StartsAt // the whole range
			}
			if err := restampBooking(tx, b.GPUIDs, from, b.EndsAt, now); err != nil {
				return err
			}
		}
		done = b
		return nil
	})
	if err != nil {
		return nil, mapErr(err, "booking")
	}
	return done, nil
}

// readForRelease reads booking id (releaseReadSQL); usage says whether
// usage is stored within its range up to now plus the skew allowed.
func readForRelease(conn raw, id int64, now time.Time) (*models.Booking, bool, error) {
	rows, err := conn.query(releaseRead, releaseReadArgs(id, now)...)
	if err != nil {
		return nil, false, fmt.Errorf("store: read booking %d: %w", id, err)
	}
	defer rows.Close()
	var rr releaseReadRows
	for rows.Next() {
		// On the concrete *sql.Rows: see scanPolicyRows.
		var r bookingRow
		var gpu sql.NullInt64
		var uuid sql.NullString
		var stored sql.NullBool
		if err := rows.Scan(&r.ID, &r.UserID, &r.NodeID, &r.StartsAt, &r.EndsAt, &r.Note, &r.Kind, &r.Status, &r.ReleasedAt,
			&r.CreatedAt, &r.UpdatedAt, &r.UserName, &r.UserEmail, &r.NodeName, &gpu, &uuid, &stored); err != nil {
			return nil, false, fmt.Errorf("store: read booking %d: %w", id, err)
		}
		rr.add(&r, gpu, uuid, stored)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: read booking %d: %w", id, err)
	}
	return rr.result()
}

// releaseReadArgs are releaseRead's arguments for booking id at now.
func releaseReadArgs(id int64, now time.Time) []any {
	return []any{utc(now.Add(models.UsageFutureSkew + time.Minute)), id}
}

// releaseReadRows gathers the rows of releaseReadSQL: the booking, its
// GPUs, and whether usage is stored on one of them.
type releaseReadRows struct {
	b     *models.Booking
	usage bool
}

// add takes a row read: the booking (the first), a GPU, its usage probe.
func (rr *releaseReadRows) add(r *bookingRow, gpu sql.NullInt64, uuid sql.NullString, stored sql.NullBool) {
	if rr.b == nil {
		m := r.model()
		rr.b = &m
	}
	if gpu.Valid {
		rr.b.GPUIDs = append(rr.b.GPUIDs, gpu.Int64)
		rr.b.GPUUUIDs = append(rr.b.GPUUUIDs, uuid.String)
	}
	rr.usage = rr.usage || stored.Bool
}

// result is the booking read, or not found when there was no row.
func (rr *releaseReadRows) result() (*models.Booking, bool, error) {
	if rr.b == nil {
		return nil, false, gorm.ErrRecordNotFound
	}
	return rr.b, rr.usage, nil
}

// releaseWrite is what releasing a booking at now writes.
type releaseWrite struct {
	status   string
	blocking bool
	whole    bool // released in its first second: cancelled whole
	end      time.Time
	oldEnd   time.Time
	at       time.Time
	ev       auditRow
}

// planRelease is what releasing b at now by actor writes, its audit
// event included.
func planRelease(ctx context.Context, b *models.Booking, actor *models.User, now time.Time) (releaseWrite, error) {
	end, whole := models.ReleaseEnd(b, now)
	w := releaseWrite{status: models.StatusConfirmed, blocking: true, whole: whole, end: end, oldEnd: b.EndsAt, at: utc(now)}
	details := newBookingEventDetails(actor, b)
	oldEnd := w.oldEnd // copies: w itself stays on the stack
	details.OldEndsAt, details.EndsAt = &oldEnd, &end
	if whole { // released within its first second: free all of it
		details.EndsAt, details.Freed = nil, true
		w.status, w.blocking, w.end = models.StatusCancelled, false, w.oldEnd
	}
	var err error
	w.ev, err = bookingAuditRow(ctx, actor, models.AuditBookingRelease, b, details)
	return w, err
}

// pgArgs are releasePG's arguments for booking id.
func (w releaseWrite) pgArgs(id int64) []any {
	return []any{w.status, w.end, w.at, w.at, id, w.blocking, w.end, id,
		w.ev.At, w.ev.ActorID, w.ev.ActorLabel, w.ev.Action, w.ev.TargetType, strconv.FormatInt(id, 10), w.ev.Details, w.ev.IP}
}

// apply changes b as w wrote it.
func (w releaseWrite) apply(b *models.Booking) {
	at := w.at
	b.Status, b.EndsAt, b.ReleasedAt, b.UpdatedAt = w.status, w.end, &at, at
}

// writeRelease writes b's release at now and its audit event, changes b
// as written and returns the end b had before.
func writeRelease(conn raw, b *models.Booking, actor *models.User, now time.Time) (time.Time, error) {
	w, err := planRelease(conn.ctx, b, actor, now)
	if err != nil {
		return b.EndsAt, err
	}
	if conn.dialect == Postgres {
		_, err = conn.exec(releasePG, w.pgArgs(b.ID)...)
	} else {
		if w.whole {
			_, err = conn.exec(cancelBookingSQL, w.at, w.at, b.ID)
		} else {
			_, err = conn.exec(releaseBookingSQL, w.end, w.at, w.at, b.ID)
		}
		if err == nil && w.whole {
			_, err = conn.exec(cancelGPUsSQL, b.ID)
		} else if err == nil {
			_, err = conn.exec(releaseGPUsSQL, w.end, b.ID)
		}
		if err == nil {
			_, err = conn.exec(auditInsertSQL, w.ev.At, w.ev.ActorID, w.ev.ActorLabel, w.ev.Action, w.ev.TargetType,
				strconv.FormatInt(b.ID, 10), w.ev.Details, w.ev.IP)
		}
	}
	if err != nil {
		return w.oldEnd, fmt.Errorf("store: release booking %d: %w", b.ID, err)
	}
	w.apply(b)
	return w.oldEnd, nil
}

// bookingAuditRow is the event auditBooking writes, for writers that insert
// it themselves; the client's address comes from ctx, as in audit.
func bookingAuditRow(ctx context.Context, actor *models.User, action string, b *models.Booking, details bookingEventDetails) (auditRow, error) {
	by := models.ActorFor(actor, "")
	if by.IP == "" {
		by.IP = models.ClientIPFromContext(ctx)
	}
	return newAuditRow(by, action, "booking", b.ID, details)
}

// bookingEventDetails are the details of a booking's creation or release
// as a struct whose fields come in the order encoding/json writes a map's
// keys (sorted): the event's JSON is byte for byte what auditBooking's map
// gives (TestBookingEventDetailsAsMap), without the map's sorting and
// boxing on what API users do most.
type bookingEventDetails struct {
	ActorID   *int64     `json:"actor_id,omitempty"`
	AsAdmin   *bool      `json:"as_admin,omitempty"`
	EndsAt    *time.Time `json:"ends_at,omitempty"`
	Freed     bool       `json:"freed_whole_range,omitempty"`
	GPUIDs    []int64    `json:"gpu_ids"`
	OldEndsAt *time.Time `json:"old_ends_at,omitempty"`
	StartsAt  time.Time  `json:"starts_at"`
	UserID    int64      `json:"user_id"`
}

// newBookingEventDetails has what bookingAuditDetails adds to every
// booking event: the owner, the GPUs, the start, and the actor when it is
// not the owner.
func newBookingEventDetails(actor *models.User, b *models.Booking) bookingEventDetails {
	d := bookingEventDetails{GPUIDs: b.GPUIDs, StartsAt: b.StartsAt, UserID: b.UserID}
	if actor != nil && actor.ID != b.UserID {
		id, admin := actor.ID, actor.IsAdmin
		d.ActorID, d.AsAdmin = &id, &admin
	}
	return d
}
