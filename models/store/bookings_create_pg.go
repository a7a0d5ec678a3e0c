package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// createPipelined is one try of CreateBooking on PostgreSQL in two round
// trips (pg_pipeline.go). The first sends BEGIN, the policy read that
// locks the user's row, then the reads that must follow the lock — what
// the user holds and the loans of the quota weeks, and whether usage is
// stored in the booking's range — each a statement of its own, run after
// the lock was taken, with a snapshot taken then. The second sends the
// insert (newBookingPG) and COMMIT. A refusal (validation, policy,
// overlap) is rolled back, a third round trip for refusals only; an
// overlap is returned unexplained, as createBooking's.
//
// The reads of the first trip cannot wait for the policy read's answer,
// so they read a little more than the GORM path: the weeks of the range
// asked for before validation trims it to the second (the evaluator
// counts only what lies in the weeks it judges), and the holdings only
// while a limit counts them (heldPG). When usage is stored in the range,
// which needs the restamp of usage_stamps.go inside the transaction, it
// rolls back and says not done, for createBooking's transaction to do it
// all again: agents report a minute after it ends, so that is rare.
func (db *DB) createPipelined(ctx context.Context, req models.NewBooking, lim models.BookingLimits, now time.Time, by models.Actor) (b *models.Booking, done bool, err error) {
	var restamp bool
	err = db.pgConn(ctx, func(c *pgx.Conn) error {
		loc := lim.Location
		if loc == nil {
			loc = time.UTC
		}
		// The range before validation, widened to whole seconds: validation
		// only truncates it to the second and moves a start in the grace
		// period to now, within these bounds.
		from, to := req.StartsAt.Truncate(time.Second), req.EndsAt
		probeFrom, probeTo, probe := restampRange(from, to, now)
		var (
			rows        []policyReadRow
			held        []models.Holding
			heldCounted = true
			loans       []models.QuotaLoan
			stored      bool
		)
		policySQL, policyArgs := policyQuery(Postgres, true, req.UserID, req.GPUIDs)
		batch := &pgx.Batch{}
		batch.Queue("BEGIN")
		batch.Queue(policySQL, policyArgs...)
		batch.Queue(heldPG.postgres, req.UserID, models.StatusConfirmed, utc(models.WeekStart(from, loc)),
			utc(models.NextWeek(models.WeekStart(to, loc))), models.RuleMaxGPUs, models.RuleMaxGPUHours)
		batch.Queue(loansPG.postgres, utc(models.WeekStart(from, loc)), utc(models.NextWeek(models.WeekStart(to, loc))), req.UserID)
		if probe {
			batch.Queue(usageProbePG.postgres, pgIDArray(req.GPUIDs), utc(probeFrom), utc(probeTo))
		}
		res := sendBatch(ctx, c, batch)
		res.exec()
		res.rows(func(r sqlRows) error {
			row, err := scanPolicyRow(r)
			rows = append(rows, row)
			return err
		})
		res.rows(func(r sqlRows) error {
			h, ok, err := scanHeld(r, req.UserID)
			if ok {
				held = append(held, h)
			} else {
				heldCounted = false
			}
			return err
		})
		res.rows(func(r sqlRows) error {
			l, err := scanLoan(r)
			loans = append(loans, l)
			return err
		})
		if probe {
			res.rows(func(r sqlRows) error { return r.Scan(&stored) })
		}
		if err := res.close(); err != nil {
			return fmt.Errorf("store: policy read: %w", err)
		}
		pr := newPolicyRead(req.UserID, lim, rows)
		var err error
		if req, err = models.ValidateNewBooking(req, pr.gpus, lim, now); err != nil {
			return err
		}
		if !pr.found {
			return mapErr(gorm.ErrRecordNotFound, "user")
		}
		if stored {
			return nil // not done: the GORM path restamps
		}
		in := pr.in
		if in.NeedsUsage() {
			if !heldCounted { // the last limit that counts them went in the instant between the two reads
				if held, err = heldNow(ctx, c, req.UserID, models.WeekStart(from, loc), models.NextWeek(models.WeekStart(to, loc))); err != nil {
					return err
				}
			}
			in.Held, in.Loans = held, loans
		}
		for _, id := range req.GPUIDs {
			in.GPUModels = append(in.GPUModels, pr.gpus[id].Model)
		}
		if breaches := models.EvaluatePolicy(req, in, now); len(breaches) > 0 {
			return models.PolicyError(breaches)
		}
		g := pr.gpus[req.GPUIDs[0]]
		ev, err := newAuditRow(by, models.AuditBookingCreate, "booking", 0, bookingEventDetails{
			GPUIDs: req.GPUIDs, StartsAt: req.StartsAt, EndsAt: &req.EndsAt, UserID: req.UserID})
		if err != nil {
			return err
		}
		var id int64
		var again bool // usage stored by now after all (newBookingPG's own probe)
		batch = &pgx.Batch{}
		batch.Queue(newBookingPG.postgres, newBookingArgs(req, g.NodeID, now, ev)...)
		batch.Queue("COMMIT")
		res = sendBatch(ctx, c, batch)
		res.rows(func(r sqlRows) error { return r.Scan(&id, &again) })
		res.exec()
		if err := res.close(); err != nil {
			return err // an overlap among them, for CreateBooking to explain
		}
		b, done, restamp = newBookingModel(id, req, pr, now), true, again
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

// heldSQL reads the user's confirmed bookings overlapping [$3, $4), each
// with the number of GPUs it holds, as heldBookings does.
const heldSQL = `SELECT b.id, b.starts_at, b.ends_at, b.kind, (SELECT count(*) FROM booking_gpus bg WHERE bg.booking_id = b.id)
	FROM bookings b WHERE b.user_id = $1 AND b.status = $2 AND b.ends_at > $3 AND b.starts_at < $4`

// heldPG is heldSQL for the first round trip of a booking: only while a
// limit of the rules $5 and $6 (those that count holdings,
// PolicyInput.NeedsUsage) exists, since the policy read that says so has
// not answered yet; otherwise one row of id 0 says that none did (both
// in the statement's one snapshot). Most clusters set no such limit, and
// a user booking ahead may hold hundreds of bookings in the weeks read.
var heldPG = rawSQL{postgres: heldSQL + `
		AND EXISTS (SELECT 1 FROM policy_limits WHERE rule IN ($5, $6))
UNION ALL SELECT 0, NULL, NULL, '', 0 WHERE NOT EXISTS (SELECT 1 FROM policy_limits WHERE rule IN ($5, $6))
ORDER BY 2`}

// loansPG reads the loans of the weeks starting in [$1, $2) that concern
// user $3 or a pool, as loansBetween does.
var loansPG = rawSQL{postgres: `SELECT l.id, l.week_start, l.from_user, l.to_user, l.team_id, l.gpu_minutes, l.note, l.created_at,
	COALESCE(fu.name, ''), COALESCE(tu.name, ''), COALESCE(t.name, '')
	FROM quota_loans l LEFT JOIN users fu ON fu.id = l.from_user LEFT JOIN users tu ON tu.id = l.to_user
	LEFT JOIN teams t ON t.id = l.team_id
	WHERE l.week_start >= $1 AND l.week_start < $2 AND (l.from_user = $3 OR l.to_user = $3 OR l.team_id IS NOT NULL)
	ORDER BY l.id`}

// usageProbePG says whether usage is stored on the GPUs (an array) in
// [$2, $3), as usageStored does.
var usageProbePG = rawSQL{postgres: `SELECT EXISTS (SELECT 1 FROM gpu_usage_minutes
	WHERE gpu_id = ANY(CAST($1 AS bigint[])) AND minute >= $2 AND minute < $3)`}

// scanHeld scans a row of heldPG; ok is false on its row that says no
// limit counts holdings.
func scanHeld(rows sqlRows, userID int64) (h models.Holding, ok bool, err error) {
	var start, end sql.NullTime
	h = models.Holding{UserID: userID, Status: models.StatusConfirmed}
	if err := rows.Scan(&h.ID, &start, &end, &h.Kind, &h.GPUs); err != nil {
		return h, true, err
	}
	h.StartsAt, h.EndsAt = start.Time.UTC(), end.Time.UTC()
	return h, h.ID != 0, nil
}

// heldNow reads the user's holdings in [from, to) on c, in the open
// transaction.
func heldNow(ctx context.Context, c *pgx.Conn, userID int64, from, to time.Time) ([]models.Holding, error) {
	rows, err := c.Query(ctx, heldSQL+" ORDER BY b.starts_at", userID, models.StatusConfirmed, utc(from), utc(to))
	if err != nil {
		return nil, fmt.Errorf("store: held bookings: %w", err)
	}
	defer rows.Close()
	out := []models.Holding{}
	for rows.Next() {
		h, _, err := scanHeld(rows, userID)
		if err != nil {
			return nil, fmt.Errorf("store: held bookings: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// scanLoan scans a row of loansPG.
func scanLoan(rows sqlRows) (models.QuotaLoan, error) {
	var r loanRow
	err := rows.Scan(&r.ID, &r.WeekStart, &r.FromUser, &r.ToUser, &r.TeamID, &r.GPUMinutes, &r.Note, &r.CreatedAt,
		&r.FromName, &r.ToName, &r.TeamName)
	return r.model(), err
}
