package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gpubook/gpubook/models"
)

// UsageReads are the reads of a user's holdings and loans in [from, to)
// that a pipelined booking may make (bookings_create_pg.go): heldPG's and
// loansPG's, which read them only while a limit counts them (Counted),
// and usageNow's, which always do.
type UsageReads struct {
	Held, HeldNow   []models.Holding
	Loans, LoansNow []models.QuotaLoan
	Counted         [2]bool // heldPG's, loansPG's
}

// UsageReads runs them on PostgreSQL.
func (db *DB) UsageReads(ctx context.Context, userID int64, from, to time.Time) (UsageReads, error) {
	r := UsageReads{Counted: [2]bool{true, true}}
	err := db.pgConn(ctx, func(c *pgx.Conn) error {
		batch := &pgx.Batch{}
		batch.Queue(heldPG.postgres, userID, models.StatusConfirmed, utc(from), utc(to), models.RuleMaxGPUs, models.RuleMaxGPUHours)
		batch.Queue(loansPG.postgres, utc(from), utc(to), userID, models.RuleMaxGPUs, models.RuleMaxGPUHours)
		res := sendBatch(ctx, c, batch)
		res.rows(func(s sqlRows) error {
			h, ok, err := scanHeld(s, userID)
			r.Held, r.Counted[0] = appendIf(r.Held, h, ok), r.Counted[0] && ok
			return err
		})
		res.rows(func(s sqlRows) error {
			l, ok, err := scanLoan(s)
			r.Loans, r.Counted[1] = appendIf(r.Loans, l, ok), r.Counted[1] && ok
			return err
		})
		if err := res.close(); err != nil {
			return err
		}
		var err error
		r.HeldNow, r.LoansNow, err = usageNow(ctx, c, userID, from, to)
		return err
	})
	return r, err
}
