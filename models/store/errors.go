package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// overlapConstraint names the PostgreSQL exclusion constraint and the SQLite
// trigger message that refuse overlapping blocking bookings.
const overlapConstraint = "booking_gpus_no_overlap"

// isOverlap reports whether err is the database refusing an overlap.
func isOverlap(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23P01"
	}
	return err != nil && strings.Contains(err.Error(), overlapConstraint)
}

// isDeadlock reports whether PostgreSQL chose err's transaction as the
// victim of a deadlock. Two transactions that insert conflicting blocking
// rows at the same instant can each find the other's row in the exclusion
// constraint's index and wait for it; after deadlock_timeout PostgreSQL
// aborts one of them, and the other goes on to commit.
func isDeadlock(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "40P01"
}

// deadlockTries is how many times retryDeadlock runs a transaction that
// keeps being a deadlock's victim. One more try is nearly always enough;
// a lab's busiest minutes (TestMixedChangesUnderConcurrency: eight
// writers on four GPUs) saw a retry be a victim again.
const deadlockTries = 3

// retryDeadlock runs try, and again, up to deadlockTries times in all,
// while its transaction was a deadlock's victim: the transaction that won
// has committed or is about to, so the next try sees its booking and is
// refused with it explained (or succeeds, when the winner let go), instead
// of failing as internal.
func retryDeadlock(try func() error) error {
	err := try()
	for n := 1; n < deadlockTries && isDeadlock(err); n++ {
		err = try()
	}
	return err
}

// inTxRetrying runs fn in a transaction, and again when PostgreSQL
// aborted it as a deadlock's victim (retryDeadlock): the transactions that
// write blocking booking rows, which race on the exclusion constraint.
func (db *DB) inTxRetrying(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return retryDeadlock(func() error { return db.Gorm.WithContext(ctx).Transaction(fn) })
}

// mapErr turns driver errors into domain errors; what stays unknown becomes
// EINTERNAL with the cause kept for the log. what names the thing, for the message.
func mapErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var de *models.Error
	if errors.As(err, &de) {
		return err
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return &models.Error{Code: models.ENOTFOUND, Msg: models.M("err.not_found", "What", what), Err: err}
	}
	if isOverlap(err) {
		return &models.Error{Code: models.ECONFLICT, Msg: models.M("err.booking_conflict", "Count", 1), Err: err}
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "23505":
			return &models.Error{Code: models.ECONFLICT, Msg: models.M("err.exists", "What", what), Err: err}
		case "23503":
			return &models.Error{Code: models.ECONFLICT, Msg: models.M("err.in_use", "What", what), Err: err}
		case "23514":
			return &models.Error{Code: models.EINVALID, Msg: models.M("err.invalid"), Err: err}
		case "22021", "22P05", "22003", "22001":
			// NUL or bad UTF-8, a number or text too big for its column: the
			// models' rules refuse these first; this keeps a value one of them
			// missed a 4xx instead of a 500.
			return &models.Error{Code: models.EINVALID, Msg: models.M("err.invalid"), Err: err}
		}
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "UNIQUE constraint failed"):
		return &models.Error{Code: models.ECONFLICT, Msg: models.M("err.exists", "What", what), Err: err}
	case strings.Contains(msg, "FOREIGN KEY constraint failed"):
		return &models.Error{Code: models.ECONFLICT, Msg: models.M("err.in_use", "What", what), Err: err}
	case strings.Contains(msg, "CHECK constraint failed"):
		return &models.Error{Code: models.EINVALID, Msg: models.M("err.invalid"), Err: err}
	}
	return models.Internal(err)
}

// utc normalises a time for storage: UTC and whole seconds, so that SQLite's
// text comparison orders times correctly.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := utc(*t)
	return &u
}
