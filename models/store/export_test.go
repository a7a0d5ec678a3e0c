package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gpubook/gpubook/models"
)

// UsageNow runs, on PostgreSQL, the read of a user's holdings and loans
// in [from, to) that a pipelined booking makes where a limit counts them
// (bookings_create_pg.go).
func (db *DB) UsageNow(ctx context.Context, userID int64, from, to time.Time) (held []models.Holding, loans []models.QuotaLoan, err error) {
	err = db.pgConn(ctx, func(c *pgx.Conn) error {
		held, loans, err = usageNow(ctx, c, userID, from, to)
		return err
	})
	return held, loans, err
}
