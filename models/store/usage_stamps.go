package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// Usage stamps (migration 00007, models/usage_stamp.go): every stored
// GPU-minute carries the confirmed booking that held it and the memory its
// booker's processes held; every user row says whether its user was the
// booker. IngestUsage writes them with the rows (models.StampMinute); the
// statements below recompute them for minutes already stored, after a
// booking's range or status changed, or for rows written with plain SQL
// (tests, the report benchmark). Both follow the one rule of a booking's
// range: a minute is held when its start lies in [starts_at, ends_at).

// usageHoldersSQL reads the confirmed bookings' holds on the GPUs of node
// ?2 named by the UUIDs ?1 (a list) that overlap [?4, ?3) (?5: confirmed).
var usageHoldersSQL = listSQL(`SELECT bg.gpu_id, bg.booking_id, b.user_id, bg.starts_at, bg.ends_at FROM booking_gpus bg
	JOIN bookings b ON b.id = bg.booking_id
	WHERE bg.gpu_id IN (SELECT id FROM gpus WHERE uuid IN ? AND node_id = ?) AND bg.starts_at < ? AND bg.ends_at > ? AND b.status = ?`)

// UsageHolders reads the confirmed bookings' holds on node nodeID's GPUs
// uuids that overlap [from, to), without GORM (raw_sql.go): every usage
// batch reads them (models/store/telemetry).
func UsageHolders(tx *gorm.DB, nodeID int64, uuids []string, from, to time.Time) ([]models.UsageHolder, error) {
	conn := rawTx(tx)
	list, err := conn.listArg(uuids)
	if err != nil {
		return nil, fmt.Errorf("store: usage holders: %w", err)
	}
	out, err := queryAll(conn, usageHoldersSQL, func(r *sql.Rows) (h models.UsageHolder, err error) {
		err = r.Scan(&h.GPUID, &h.BookingID, &h.UserID, &h.StartsAt, &h.EndsAt)
		h.StartsAt, h.EndsAt = h.StartsAt.UTC(), h.EndsAt.UTC()
		return h, err
	}, list, nodeID, utc(to), utc(from), models.StatusConfirmed)
	if err != nil {
		return nil, fmt.Errorf("store: usage holders: %w", err)
	}
	return out, nil
}

// restampSQL recomputes the stamps of the stored minutes in the window the
// caller binds (@from, @to and, unless all GPUs, @gpus): first the minute's
// number, which booking held it and the most any user held, then the
// booker's memory and the user rows' booked flag from that booking.
func restampSQL(pg bool) []string {
	epoch := reportSQL{pg: pg}.epoch("minute") + " / 60"
	return []string{`UPDATE gpu_usage_minutes SET
	    unix_minute = ` + epoch + `,
	    booking_id = (SELECT bg.booking_id FROM booking_gpus bg JOIN bookings b ON b.id = bg.booking_id
	        WHERE bg.gpu_id = gpu_usage_minutes.gpu_id AND bg.starts_at <= gpu_usage_minutes.minute
	          AND bg.ends_at > gpu_usage_minutes.minute AND b.status = 'confirmed' LIMIT 1),
	    top_mem_mib = COALESCE((SELECT MAX(uu.memory_mib) FROM gpu_user_usage_minutes uu
	        WHERE uu.gpu_id = gpu_usage_minutes.gpu_id AND uu.minute = gpu_usage_minutes.minute), 0)
	  WHERE minute >= @from AND minute < @to`,
		`UPDATE gpu_usage_minutes SET
	    booker_mem_mib = COALESCE((SELECT MAX(uu.memory_mib) FROM gpu_user_usage_minutes uu JOIN bookings b ON b.id = gpu_usage_minutes.booking_id
	        WHERE uu.gpu_id = gpu_usage_minutes.gpu_id AND uu.minute = gpu_usage_minutes.minute AND uu.user_id = b.user_id), 0)
	  WHERE minute >= @from AND minute < @to`,
		`UPDATE gpu_user_usage_minutes SET
	    booked = CASE WHEN EXISTS (SELECT 1 FROM gpu_usage_minutes m JOIN bookings b ON b.id = m.booking_id
	        WHERE m.gpu_id = gpu_user_usage_minutes.gpu_id AND m.minute = gpu_user_usage_minutes.minute
	          AND b.user_id = gpu_user_usage_minutes.user_id) THEN TRUE ELSE FALSE END
	  WHERE minute >= @from AND minute < @to`,
	}
}

// restampUsage recomputes the stamps of the minutes in [from, to) on
// gpuIDs (nil: every GPU), and marks the hours dirty where the rollup job
// has summed them already (usage_hours.go).
func restampUsage(tx *gorm.DB, gpuIDs []int64, from, to time.Time) error {
	if err := markRollupDirty(tx, from, to); err != nil {
		return err
	}
	args := map[string]any{"from": utc(from), "to": utc(to)}
	for _, q := range restampSQL(tx.Dialector.Name() == Postgres) {
		if gpuIDs != nil {
			q += " AND gpu_id IN @gpus"
			args["gpus"] = gpuIDs
		}
		if err := tx.Exec(q, args).Error; err != nil {
			return fmt.Errorf("store: restamp usage: %w", err)
		}
	}
	return nil
}

// restampBooking restamps the minutes of gpuIDs in [from, to) after a
// booking's hold on them changed there. IngestUsage refuses minutes later
// than now plus the clock skew it allows, so a change that lies wholly
// beyond that — a new or extended booking in the future, the common
// case — has nothing stored to restamp and costs no query. A change that
// touches the present (book now, release) usually has nothing stored
// either, because agents report a minute after it ends: one probe on the
// primary key finds that out instead of three UPDATEs that change nothing.
func restampBooking(tx *gorm.DB, gpuIDs []int64, from, to, now time.Time) error {
	from, to, ok := restampRange(from, to, now)
	if !ok {
		return nil
	}
	stored, err := usageStored(tx, gpuIDs, from, to)
	if err != nil || !stored {
		return err
	}
	return restampUsage(tx, gpuIDs, from, to)
}

// restampRange is the part of [from, to) (or [to, from)) where usage may
// be stored at now; ok is false when there is none.
func restampRange(from, to, now time.Time) (time.Time, time.Time, bool) {
	if from.After(to) {
		from, to = to, from
	}
	if limit := now.Add(models.UsageFutureSkew + time.Minute); to.After(limit) {
		to = limit
	}
	return from, to, from.Before(to)
}

// usageStored says whether any GPU-minute of gpuIDs in [from, to) is
// stored; a user row never exists without its GPU-minute.
func usageStored(tx *gorm.DB, gpuIDs []int64, from, to time.Time) (bool, error) {
	var n []int
	err := tx.Raw("SELECT 1 FROM gpu_usage_minutes WHERE gpu_id IN ? AND minute >= ? AND minute < ? LIMIT 1",
		gpuIDs, utc(from), utc(to)).Scan(&n).Error
	if err != nil {
		return false, fmt.Errorf("store: usage stored: %w", err)
	}
	return len(n) > 0, nil
}

// RestampUsage recomputes the stamps of every GPU's minutes in [from, to).
// The store keeps them itself; this is for rows written around it with
// plain SQL (test fixtures, the report benchmark's generated week).
func (db *DB) RestampUsage(ctx context.Context, from, to time.Time) error {
	return restampUsage(db.Gorm.WithContext(ctx), nil, from, to)
}
