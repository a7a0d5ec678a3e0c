package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gpubook/gpubook/models"
)

// releasePipelined is ReleaseBooking on PostgreSQL in two round trips
// (pg_pipeline.go): BEGIN with the read that locks the booking, then the
// writes with COMMIT. A release the rules refuse is rolled back (a third
// round trip, refusals only). When usage is stored in the booking's range
// (the read's probe), which needs the restamp of usage_stamps.go inside
// the transaction, it rolls back and says not done, for ReleaseBooking's
// transaction to do it all again: agents report a minute after it ends,
// so that is rare.
func (db *DB) releasePipelined(ctx context.Context, id int64, actor *models.User, now time.Time) (b *models.Booking, done bool, err error) {
	err = db.pgConn(ctx, func(c *pgx.Conn) error {
		var rr releaseReadRows
		batch := &pgx.Batch{}
		batch.Queue("BEGIN")
		batch.Queue(bookingGPUsLockPG, id) // the GPUs before the booking, as every writer
		batch.Queue(releaseRead.postgres, releaseReadArgs(id, now)...)
		res := sendBatch(ctx, c, batch)
		res.exec()
		res.rows(func(sqlRows) error { return nil })
		res.rows(rr.scan)
		if err := res.close(); err != nil {
			return fmt.Errorf("store: read booking %d: %w", id, err)
		}
		rb, usage, err := rr.result()
		if err != nil || usage {
			return err
		}
		if err := models.CheckRelease(rb, actor, now); err != nil {
			return err
		}
		w, err := planRelease(ctx, rb, actor, now)
		if err != nil {
			return err
		}
		batch = &pgx.Batch{}
		batch.Queue(releasePG.postgres, w.pgArgs(rb.ID)...)
		batch.Queue("COMMIT")
		res = sendBatch(ctx, c, batch)
		res.exec()
		res.exec()
		if err := res.close(); err != nil {
			return fmt.Errorf("store: release booking %d: %w", rb.ID, err)
		}
		w.apply(rb)
		b, done = rb, true
		return nil
	})
	return b, done, err
}
