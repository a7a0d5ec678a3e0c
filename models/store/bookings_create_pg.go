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
// the lock was taken, with a snapshot taken then (bookingReads). The
// second sends the insert (newBookingPG) and COMMIT. A refusal
// (validation, policy, overlap) is rolled back, a third round trip for
// refusals only; an overlap is returned unexplained, as createBooking's.
// When usage is stored in the range, which needs the restamp of
// usage_stamps.go inside the transaction, it rolls back and says not
// done, for createBooking's transaction to do it all again: agents report
// a minute after it ends, so that is rare.
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

// bookingReads is what the first round trip of a pipelined booking read.
// Its reads cannot wait for the policy read's answer, so they read a
// little more than the GORM path: the weeks of the range asked for before
// validation trims it to the second (the evaluator counts only what lies
// in the weeks it judges). What the user holds and their loans are read
// only while a limit counts them (heldPG, loansPG); counted says both
// statements found one.
type bookingReads struct {
	policy   policyRead
	from, to time.Time // the quota weeks read
	held     []models.Holding
	loans    []models.QuotaLoan
	counted  bool
	stored   bool // usage stored in the range
}

// readForBooking sends BEGIN and the first round trip's reads for req.
func readForBooking(ctx context.Context, c *pgx.Conn, req models.NewBooking, lim models.BookingLimits, now time.Time) (*bookingReads, error) {
	loc := lim.Location
	if loc == nil {
		loc = time.UTC
	}
	// The range before validation, widened to whole seconds: validation
	// only truncates it to the second and moves a start in the grace
	// period to now, within these bounds.
	from, to := req.StartsAt.Truncate(time.Second), req.EndsAt
	r := &bookingReads{from: models.WeekStart(from, loc), to: models.NextWeek(models.WeekStart(to, loc)), counted: true}
	probeFrom, probeTo, probe := restampRange(from, to, now)
	policySQL, policyArgs := policyQuery(Postgres, true, req.UserID, req.GPUIDs)
	batch := &pgx.Batch{}
	batch.Queue("BEGIN")
	batch.Queue(policySQL, policyArgs...)
	batch.Queue(heldPG.postgres, req.UserID, models.StatusConfirmed, utc(r.from), utc(r.to), models.RuleMaxGPUs, models.RuleMaxGPUHours)
	batch.Queue(loansPG.postgres, utc(r.from), utc(r.to), req.UserID, models.RuleMaxGPUs, models.RuleMaxGPUHours)
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
	res.rows(func(s sqlRows) error {
		h, ok, err := scanHeld(s, req.UserID)
		r.held, r.counted = appendIf(r.held, h, ok), r.counted && ok
		return err
	})
	res.rows(func(s sqlRows) error {
		l, ok, err := scanLoan(s)
		r.loans, r.counted = appendIf(r.loans, l, ok), r.counted && ok
		return err
	})
	if probe {
		res.rows(func(s sqlRows) error { return s.Scan(&r.stored) })
	}
	if err := res.close(); err != nil {
		return nil, fmt.Errorf("store: policy read: %w", err)
	}
	r.policy = newPolicyRead(req.UserID, lim, rows)
	return r, nil
}

// appendIf appends v to s when ok.
func appendIf[T any](s []T, v T, ok bool) []T {
	if ok {
		return append(s, v)
	}
	return s
}

// judge evaluates the policy for req, validated, on what r read; when a
// limit counts holdings but the reads of the first round trip found none
// (the last such limit went in the instant between the policy read and
// theirs), it reads them again on c, in the transaction.
func (r *bookingReads) judge(ctx context.Context, c *pgx.Conn, req models.NewBooking, now time.Time) error {
	in := r.policy.in
	if in.NeedsUsage() {
		if !r.counted {
			var err error
			if r.held, r.loans, err = usageNow(ctx, c, req.UserID, r.from, r.to); err != nil {
				return err
			}
		}
		in.Held, in.Loans = r.held, r.loans
	}
	for _, id := range req.GPUIDs {
		in.GPUModels = append(in.GPUModels, r.policy.gpus[id].Model)
	}
	if breaches := models.EvaluatePolicy(req, in, now); len(breaches) > 0 {
		return models.PolicyError(breaches)
	}
	return nil
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

// loansSQL reads the loans of the weeks starting in [$1, $2) that concern
// user $3 or a pool, as loansBetween does.
const loansSQL = `SELECT l.id, l.week_start, l.from_user, l.to_user, l.team_id, l.gpu_minutes, l.note, l.created_at,
	COALESCE(fu.name, ''), COALESCE(tu.name, ''), COALESCE(t.name, '')
	FROM quota_loans l LEFT JOIN users fu ON fu.id = l.from_user LEFT JOIN users tu ON tu.id = l.to_user
	LEFT JOIN teams t ON t.id = l.team_id
	WHERE l.week_start >= $1 AND l.week_start < $2 AND (l.from_user = $3 OR l.to_user = $3 OR l.team_id IS NOT NULL)`

// loansPG is loansSQL as heldPG is heldSQL: only while a limit of the
// rules $4 and $5 exists, otherwise one row of id 0.
var loansPG = rawSQL{postgres: loansSQL + `
		AND EXISTS (SELECT 1 FROM policy_limits WHERE rule IN ($4, $5))
UNION ALL SELECT 0, NULL, NULL, NULL, NULL, 0, '', NULL, '', '', ''
	WHERE NOT EXISTS (SELECT 1 FROM policy_limits WHERE rule IN ($4, $5))
ORDER BY 1`}

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

// usageNow reads the user's holdings and loans of [from, to) on c, in the
// open transaction, whatever the limits.
func usageNow(ctx context.Context, c *pgx.Conn, userID int64, from, to time.Time) ([]models.Holding, []models.QuotaLoan, error) {
	held := []models.Holding{}
	loans := []models.QuotaLoan{}
	batch := &pgx.Batch{}
	batch.Queue(heldSQL+" ORDER BY b.starts_at", userID, models.StatusConfirmed, utc(from), utc(to))
	batch.Queue(loansSQL+" ORDER BY l.id", utc(from), utc(to), userID)
	res := sendBatch(ctx, c, batch)
	res.rows(func(s sqlRows) error {
		h, _, err := scanHeld(s, userID)
		held = append(held, h)
		return err
	})
	res.rows(func(s sqlRows) error {
		l, _, err := scanLoan(s)
		loans = append(loans, l)
		return err
	})
	if err := res.close(); err != nil {
		return nil, nil, fmt.Errorf("store: held bookings and loans: %w", err)
	}
	return held, loans, nil
}

// scanLoan scans a row of loansPG or loansSQL; ok is false on loansPG's
// row that says no limit counts them.
func scanLoan(rows sqlRows) (models.QuotaLoan, bool, error) {
	var r loanRow
	var week, created sql.NullTime
	err := rows.Scan(&r.ID, &week, &r.FromUser, &r.ToUser, &r.TeamID, &r.GPUMinutes, &r.Note, &created,
		&r.FromName, &r.ToName, &r.TeamName)
	r.WeekStart, r.CreatedAt = week.Time, created.Time
	return r.model(), r.ID != 0 || err != nil, err
}
