package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gpubook/gpubook/models"
)

// The usage jobs' locks (the roll job here, the partition jobs in
// models/store/telemetry) give up rather than queue behind ingest; these
// are their limits and the error they give up with.
const (
	// PartitionLockWait is how long a job's statement waits for a lock
	// (lock_timeout) before it gives up and tries again later.
	PartitionLockWait = 500 * time.Millisecond
	// LockQueueWait bounds the one queued try a job makes after its
	// NOWAIT tries: writers that keep a lock held without a gap (ingest at
	// a steady rate) would starve a job that never queues, and queueing
	// this long is the most an ingest ever waits behind a job's request.
	LockQueueWait = 100 * time.Millisecond
)

// IsLockTimeout is PostgreSQL's lock_not_available: a lock_timeout or a NOWAIT.
func IsLockTimeout(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "55P03"
}

// AsLockBusy marks a lock given up on as models.ErrLockBusy, which the job
// runner retries within a minute instead of at the job's next interval.
func AsLockBusy(err error) error {
	if IsLockTimeout(err) && !errors.Is(err, models.ErrLockBusy) {
		return fmt.Errorf("%w: %w", models.ErrLockBusy, err)
	}
	return err
}
