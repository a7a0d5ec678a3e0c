package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// createPipelined is one try of CreateBooking on PostgreSQL in two round
// trips (pg_pipeline.go). The first sends BEGIN, the policy read that
// locks the user's row and, in the booking's range, the probe for stored
// usage; the second the insert (newBookingPG) and COMMIT. What the user
// holds and their loans are read between the two, in one more trip, only
// where a limit counts them (judge): after the lock, as the GORM path
// reads them. A refusal (validation, policy, overlap) is rolled back, a
// trip for refusals only; an overlap is returned unexplained, as
// createBooking's. When usage is stored in the range, which needs the
// restamp of usage_stamps.go inside the transaction, it rolls back and
// says not done, for createBooking's transaction to do it all again:
// agents report a minute after it ends, so that is rare.
func (db *DB) createPipelined(ctx context.Context, req models.NewBooking, lim models.BookingLimits, now time.Time, by models.Actor) (b *models.Booking, done bool, err error) {
	var restamp bool
	err = db.pgConn(ctx, func(c *pgx.Conn) error {
		r, err := readForBooking(ctx, c, req, lim, now)
		if err != nil {
			return err
		}
		if req, err = models.ValidateNewBooking(req, r.policy.gpus, lim, now); err != nil {
			return err
		}
		if !r.policy.found {
			return mapErr(gorm.ErrRecordNotFound, "user")
		}
		if r.stored {
			return nil // not done: the GORM path restamps
		}
		if err := r.judge(ctx, c, req, now); err != nil {
			return err
		}
		ev, err := newAuditRow(by, models.AuditBookingCreate, "booking", 0, bookingEventDetails{
			GPUIDs: req.GPUIDs, StartsAt: req.StartsAt, EndsAt: &req.EndsAt, UserID: req.UserID})
		if err != nil {
			return err
		}
		var id int64
		var again bool // usage stored by now after all (newBookingPG's own probe)
		batch := &pgx.Batch{}
		batch.Queue(newBookingPG.postgres, newBookingArgs(req, r.policy.gpus[req.GPUIDs[0]].NodeID, now, ev)...)
		batch.Queue("COMMIT")
		res := sendBatch(ctx, c, batch)
		res.rows(func(r sqlRows) error { return r.Scan(&id, &again) })
		res.exec()
		if err := res.close(); err != nil {
			return err // an overlap among them, for CreateBooking to explain
		}
		b, done, restamp = newBookingModel(id, req, r.policy, now), true, again
		return nil
	})
	if err == nil && restamp { // stored in the instant between the two trips: restamped after the commit
		err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			return restampBooking(tx, req.GPUIDs, b.StartsAt, b.EndsAt, now)
		})
		if err != nil {
			return nil, true, fmt.Errorf("store: booking %d made, but not its usage's restamp: %w", b.ID, err)
		}
	}
	return b, done, err
}

// PipelinedBookingSQL returns, in PostgreSQL's $n parameters, the two
// statements createPipelined sends for a booking ahead that no limit counts
// usage for: the policy read that locks the user's row and the GPUs' rows
// (locks.go; after BEGIN, in the first round trip; $1–$4 the user, $5 the
// GPUs as an array) and the insert
// (before COMMIT, in the second; newBookingArgs gives its parameters).
// Exported for bookload's checked floor, which replays them with pgbench.
func PipelinedBookingSQL() (policyRead, insert string) {
	return policyReadPG[1], newBookingPG.postgres
}

// bookingReads is what the first round trip of a pipelined booking read.
type bookingReads struct {
	policy policyRead
	stored bool // usage stored in the range
}

// readForBooking sends BEGIN and the first round trip's reads for req.
// The probe cannot wait for validation: it probes the range asked for,
// widened to whole seconds (validation only truncates it to the second
// and moves a start in the grace period to now, within these bounds).
func readForBooking(ctx context.Context, c *pgx.Conn, req models.NewBooking, lim models.BookingLimits, now time.Time) (*bookingReads, error) {
	var r bookingReads
	probeFrom, probeTo, probe := restampRange(req.StartsAt.Truncate(time.Second), req.EndsAt, now)
	policySQL, policyArgs := policyQuery(Postgres, true, req.UserID, req.GPUIDs)
	batch := &pgx.Batch{}
	batch.Queue("BEGIN")
	batch.Queue(policySQL, policyArgs...)
	if probe {
		batch.Queue(usageProbePG.postgres, pgIDArray(req.GPUIDs), utc(probeFrom), utc(probeTo))
	}
	var rows []policyReadRow
	res := sendBatch(ctx, c, batch)
	res.exec()
	res.rows(func(s sqlRows) error {
		row, err := scanPolicyRow(s)
		rows = append(rows, row)
		return err
	})
	if probe {
		res.rows(func(s sqlRows) error { return s.Scan(&r.stored) })
	}
	if err := res.close(); err != nil {
		return nil, fmt.Errorf("store: policy read: %w", err)
	}
	r.policy = newPolicyRead(req.UserID, lim, rows)
	return &r, nil
}

// judge evaluates the policy for req, validated, on what r read and, when
// a limit counts them, on what the user holds and their loans in the
// quota weeks of req, read on c in the transaction (addUsage's reads, in
// one round trip). They are not sent with the policy read, whose answer
// says whether they are needed: most clusters set no such limit, and a
// user booking ahead may hold hundreds of bookings in the weeks read.
func (r *bookingReads) judge(ctx context.Context, c *pgx.Conn, req models.NewBooking, now time.Time) error {
	in := r.policy.in
	if in.NeedsUsage() {
		from, to := models.WeekStart(req.StartsAt, in.Location), models.NextWeek(models.WeekStart(req.EndsAt, in.Location))
		var err error
		if in.Held, in.Loans, err = usageNow(ctx, c, req.UserID, from, to); err != nil {
			return err
		}
	}
	for _, id := range req.GPUIDs {
		in.GPUModels = append(in.GPUModels, r.policy.gpus[id].Model)
	}
	if breaches := models.EvaluatePolicy(req, in, now); len(breaches) > 0 {
		return models.PolicyError(breaches)
	}
	return nil
}

// heldRead reads the user's confirmed bookings overlapping [?3, ?4), each
// with the number of GPUs it holds: heldBookings on either database, and
// usageNow in the pipelined booking.
var heldRead = newRawSQL(`SELECT b.id, b.starts_at, b.ends_at, b.kind, (SELECT count(*) FROM booking_gpus bg WHERE bg.booking_id = b.id)
	FROM bookings b WHERE b.user_id = ? AND b.status = ? AND b.ends_at > ? AND b.starts_at < ? ORDER BY b.starts_at`)

// loansRead reads the loans of the weeks starting in [?1, ?2) that concern
// user ?3 (given twice) or a pool: loansBetween, and usageNow.
var loansRead = newRawSQL(`SELECT l.id, l.week_start, l.from_user, l.to_user, l.team_id, l.gpu_minutes, l.note, l.created_at,
	COALESCE(fu.name, ''), COALESCE(tu.name, ''), COALESCE(t.name, '')
	FROM quota_loans l LEFT JOIN users fu ON fu.id = l.from_user LEFT JOIN users tu ON tu.id = l.to_user
	LEFT JOIN teams t ON t.id = l.team_id
	WHERE l.week_start >= ? AND l.week_start < ? AND (l.from_user = ? OR l.to_user = ? OR l.team_id IS NOT NULL) ORDER BY l.id`)

// usageProbePG says whether usage is stored on the GPUs (an array) in
// [$2, $3), as usageStored does.
var usageProbePG = rawSQL{postgres: `SELECT EXISTS (SELECT 1 FROM gpu_usage_minutes
	WHERE gpu_id = ANY(CAST($1 AS bigint[])) AND minute >= $2 AND minute < $3)`}

// scanHeld scans a row of heldRead.
func scanHeld(rows sqlRows, userID int64) (models.Holding, error) {
	h := models.Holding{UserID: userID, Status: models.StatusConfirmed}
	err := rows.Scan(&h.ID, &h.StartsAt, &h.EndsAt, &h.Kind, &h.GPUs)
	h.StartsAt, h.EndsAt = h.StartsAt.UTC(), h.EndsAt.UTC()
	return h, err
}

// usageNow reads the user's holdings and loans of [from, to) on c, in the
// open transaction: the statements of heldBookings and loansBetween.
func usageNow(ctx context.Context, c *pgx.Conn, userID int64, from, to time.Time) ([]models.Holding, []models.QuotaLoan, error) {
	held := []models.Holding{}
	loans := []models.QuotaLoan{}
	batch := &pgx.Batch{}
	batch.Queue(heldRead.postgres, userID, models.StatusConfirmed, utc(from), utc(to))
	batch.Queue(loansRead.postgres, utc(from), utc(to), userID, userID)
	res := sendBatch(ctx, c, batch)
	res.rows(func(s sqlRows) error {
		h, err := scanHeld(s, userID)
		held = append(held, h)
		return err
	})
	res.rows(func(s sqlRows) error {
		l, err := scanLoan(s)
		loans = append(loans, l)
		return err
	})
	if err := res.close(); err != nil {
		return nil, nil, fmt.Errorf("store: held bookings and loans: %w", err)
	}
	return held, loans, nil
}

// scanLoan scans a row of loansRead.
func scanLoan(rows sqlRows) (models.QuotaLoan, error) {
	var r loanRow
	err := rows.Scan(&r.ID, &r.WeekStart, &r.FromUser, &r.ToUser, &r.TeamID, &r.GPUMinutes, &r.Note, &r.CreatedAt,
		&r.FromName, &r.ToName, &r.TeamName)
	return r.model(), err
}
