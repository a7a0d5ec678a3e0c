package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// Row locks on PostgreSQL. Every transaction that writes bookings takes
// its locks in one order, so that no two of them wait for each other:
//
//  1. the user's row: the booking's owner, whose allowance the change is
//     judged against — CreateBooking's policy read, lockOwner for a change
//     of a booking, lockUser for a loan;
//  2. the GPUs' rows, in the order of their ids — the booking's policy
//     read, lockGPUs (an approval, an import), lockNodeGPUs and
//     lockNodeGPUsOf when bookings may move to any GPU of the node,
//     lockBookingGPUs for a booking's own (a change, a release);
//  3. the bookings' rows (bookingByID with lock, the release's read).
//
// A transaction may skip a step (a release locks no user) but never goes
// back to an earlier one. Without the GPUs' locks, writers of one GPU met
// only on the exclusion constraint, which checks a new row after inserting
// it into the index: two or more inserting at once could each find
// another's row and wait for it, a deadlock PostgreSQL breaks after a
// second by failing one of them (TestMixedChangesUnderConcurrency: 4 of 20
// runs failed). With them they queue, one at a time per GPU. SQLite needs
// none of this: its IMMEDIATE transactions run one writer at a time. What
// is left — a deadlock PostgreSQL still finds — is run again
// (retryDeadlock).

// writerLock is the lock of steps 1 and 2. It conflicts with itself, so
// two writers of one user or one GPU queue, but not with the key-share
// lock of a foreign-key check, so a row that only names the user or the
// GPU (their notification, a priority booking approved for them, a
// booking's GPU row) is not held up by it. FOR UPDATE blocked those too,
// which closed cycles with booking-row locks: an approval holding the
// pre-empted booking and waiting to notify its owner, whose extension held
// the owner's row and waited for the booking.
const writerLock = "FOR NO KEY UPDATE"

// lockSQL locks, in the order of their ids, the rows of table that where
// (a condition with one parameter) selects.
func lockSQL(table, where string) string {
	return "SELECT id FROM " + table + " WHERE " + where + " ORDER BY id " + writerLock
}

// lockRows runs lockSQL(table, where) with arg, on PostgreSQL only.
func lockRows(tx *gorm.DB, table, where string, arg any) error {
	if tx.Dialector.Name() != Postgres {
		return nil
	}
	var got []int64
	if err := tx.Raw(lockSQL(table, where), arg).Scan(&got).Error; err != nil {
		return fmt.Errorf("store: lock %s: %w", table, err)
	}
	return nil
}

// lockUser serialises the policy checks of one user, so that two
// concurrent bookings or loans cannot both spend the same allowance.
func lockUser(tx *gorm.DB, userID int64) error { return lockRows(tx, "users", "id = ?", userID) }

// lockOwner locks the owner of booking id, before the booking's own row:
// an extension is judged against what the owner holds, so two at once must
// not both pass the same allowance (TestExtendQuotaUnderConcurrency).
func lockOwner(tx *gorm.DB, id int64) error {
	return lockRows(tx, "users", "id = (SELECT user_id FROM bookings WHERE id = ?)", id)
}

// lockGPUs locks the GPUs ids.
func lockGPUs(tx *gorm.DB, ids []int64) error { return lockRows(tx, "gpus", "id IN ?", ids) }

// lockNodeGPUs locks every GPU of node nodeID, for a change that may move
// bookings to any of them (a pre-empting approval).
func lockNodeGPUs(tx *gorm.DB, nodeID int64) error {
	return lockRows(tx, "gpus", "node_id = ?", nodeID)
}

// lockNodeGPUsOf locks every GPU of GPU gpuID's node (taking it out of
// service moves its bookings to the others).
func lockNodeGPUsOf(tx *gorm.DB, gpuID int64) error {
	return lockRows(tx, "gpus", "node_id = (SELECT node_id FROM gpus WHERE id = ?)", gpuID)
}

// bookingGPUs selects the GPUs of booking ?.
const bookingGPUs = "id IN (SELECT gpu_id FROM booking_gpus WHERE booking_id = ?)"

// lockBookingGPUs locks the GPUs of booking id, before its own row.
func lockBookingGPUs(tx *gorm.DB, id int64) error { return lockRows(tx, "gpus", bookingGPUs, id) }

// isDeadlock reports whether PostgreSQL chose err's transaction as the
// victim of a deadlock.
func isDeadlock(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "40P01"
}

// deadlockTries is how many times retryDeadlock runs a transaction that
// keeps being a deadlock's victim.
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
// write booking rows.
func (db *DB) inTxRetrying(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return retryDeadlock(func() error { return db.Gorm.WithContext(ctx).Transaction(fn) })
}
