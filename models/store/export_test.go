package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
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

// IngestPipelined runs only the pipelined path of a usage batch
// (agent_usage_ingest_pg.go): done is false where IngestUsage would store
// the batch the GORM way instead, and nothing is written then.
func (db *DB) IngestPipelined(ctx context.Context, nodeID int64, b wire.UsageBatch, retention time.Duration, now time.Time) (res models.UsageResult, done bool, err error) {
	s := b.Stream()
	scan, err := scanUsage(s, retention, now, true)
	if err != nil || !scan.small() {
		return res, false, err
	}
	return db.ingestPipelined(ctx, nodeID, s, scan, retention, now)
}
