package store

import (
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
