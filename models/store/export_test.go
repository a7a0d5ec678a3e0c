package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gpubook/gpubook/models"
)

// HeldReads runs, on PostgreSQL, the two reads of a user's holdings in
// [from, to) that a pipelined booking may make (bookings_create_pg.go):
// heldPG's, which reads them only while a limit counts them (counted),
// and heldNow's, which always does.
func (db *DB) HeldReads(ctx context.Context, userID int64, from, to time.Time) (pipelined []models.Holding, counted bool, now []models.Holding, err error) {
	counted = true
	err = db.pgConn(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, heldPG.postgres, userID, models.StatusConfirmed, utc(from), utc(to), models.RuleMaxGPUs, models.RuleMaxGPUHours)
		if err != nil {
			return err
		}
		for rows.Next() {
			h, ok, err := scanHeld(rows, userID)
			if err != nil {
				rows.Close()
				return err
			}
			if ok {
				pipelined = append(pipelined, h)
			} else {
				counted = false
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		now, err = heldNow(ctx, c, userID, from, to)
		return err
	})
	return pipelined, counted, now, err
}
