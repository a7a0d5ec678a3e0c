package store

import (
	"fmt"

	"gorm.io/gorm"
)

// Row locks on PostgreSQL. Every transaction that writes bookings takes
// its locks in one order, so that no two of them wait for each other:
//
//  1. the user's row (userLock): the booking's owner, whose allowance
//     the change is judged against — CreateBooking's policy read,
//     lockOwner for a change of a booking, lockUser for a loan;
//  2. the GPUs' rows (gpuLock), in the order of their ids — the
//     booking's policy read, lockGPUs, lockNodeGPUs when bookings may
//     move to any GPU of the node, lockBookingGPUs for a booking's own;
//  3. the bookings' rows (bookingByID with lock, the release's read).
//
// A transaction may skip a step (a release locks no user, a cancellation
// no GPU) but never goes back to an earlier one. SQLite needs none of
// this: its IMMEDIATE transactions run one writer at a time. What is left
// — a deadlock PostgreSQL still finds — is run again (retryDeadlock).

// userLock is the lock a transaction takes on a user's row to serialise
// that user's bookings, changes and loans: it conflicts with itself, so
// two of them cannot both spend the same allowance, but not with the
// key-share lock of a foreign-key check, so a row that only names the user
// (their notification, a priority booking approved for them, a booking of
// theirs that a pre-emption shortens) is not held up by it. FOR UPDATE
// blocked those too, which closed cycles with booking-row locks: an
// approval holding the pre-empted booking and waiting to notify its owner,
// whose extension held the owner's row and waited for the booking
// (TestMixedChangesUnderConcurrency).
const userLock = "FOR NO KEY UPDATE"

// gpuLock is the lock a transaction takes on the rows of the GPUs it is
// about to book, extend, release or move bookings on. Without it, writers
// of one GPU's bookings met only on the exclusion constraint, which checks
// a new row after inserting it into the index: two or more inserting at
// once could each find another's row and wait for it, a deadlock that
// PostgreSQL breaks after a second by failing one of them, again and again
// under load (TestMixedChangesUnderConcurrency). With it they queue, one
// at a time per GPU. Like userLock it lets foreign-key checks through.
const gpuLock = "FOR NO KEY UPDATE"

// lockUser serialises the policy checks of one user on PostgreSQL, so that
// two concurrent bookings or loans cannot both spend the same allowance.
// SQLite's IMMEDIATE transactions already run one writer at a time.
func lockUser(tx *gorm.DB, dialect string, userID int64) error {
	if dialect != Postgres || userID == 0 {
		return nil
	}
	var got []int64
	if err := tx.Raw("SELECT id FROM users WHERE id = ? "+userLock, userID).Scan(&got).Error; err != nil {
		return fmt.Errorf("store: lock user: %w", err)
	}
	return nil
}

// lockGPURows takes gpuLock, in the order of their ids, on the GPUs that
// where (a condition on gpus with one parameter, arg) selects.
func lockGPURows(tx *gorm.DB, where string, arg any) error {
	if tx.Dialector.Name() != Postgres {
		return nil
	}
	var got []int64
	if err := tx.Raw("SELECT id FROM gpus WHERE "+where+" ORDER BY id "+gpuLock, arg).Scan(&got).Error; err != nil {
		return fmt.Errorf("store: lock GPUs: %w", err)
	}
	return nil
}

// lockGPUs locks the GPUs ids.
func lockGPUs(tx *gorm.DB, ids []int64) error { return lockGPURows(tx, "id IN ?", ids) }

// lockNodeGPUs locks every GPU of node nodeID: for a change that may move
// bookings to any of them (a pre-empting approval, a GPU taken out of
// service).
func lockNodeGPUs(tx *gorm.DB, nodeID int64) error { return lockGPURows(tx, "node_id = ?", nodeID) }

// bookingGPUs selects the GPUs of booking ?.
const bookingGPUs = "id IN (SELECT gpu_id FROM booking_gpus WHERE booking_id = ?)"

// bookingGPUsLockPG is lockBookingGPUs' statement in PostgreSQL's
// parameters, for the release's pipeline.
var bookingGPUsLockPG = DollarParams("SELECT id FROM gpus WHERE " + bookingGPUs + " ORDER BY id " + gpuLock)

// lockBookingGPUs locks the GPUs of booking id, before its own row.
func lockBookingGPUs(tx *gorm.DB, id int64) error { return lockGPURows(tx, bookingGPUs, id) }
