package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// On PostgreSQL every statement sent through database/sql waits for its
// answer before the next one leaves: a booking was five round trips (the
// token's look-up, BEGIN, the policy read, the insert, COMMIT), a release
// five. On a small machine a round trip costs 0.1–0.2 ms of both
// processes' time, about what the statements themselves cost. A booking
// and a release therefore run on the pool's connection as the driver's
// own *pgx.Conn, whose batches send several statements in one pipeline
// (one Sync, one round trip): BEGIN with the read that locks, then the
// writes with COMMIT. PostgreSQL runs
// a pipeline's statements one after the other, each with its own
// snapshot (READ COMMITTED), as if they had been sent one by one; after
// an error it skips the rest up to the Sync, so a COMMIT queued after a
// failed write never runs and the transaction is rolled back (pgConn).

// sqlRows is what *sql.Rows and pgx.Rows share: the store's hand-scanned
// reads run on either.
type sqlRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// pgConn runs fn on one connection of the pool, as the driver's own
// connection. fn begins and ends its transaction in its batches; should
// it return with one still open or failed (an error, a refusal), it is
// rolled back here, one round trip that only refusals pay. A connection
// whose rollback failed is still in a transaction, and the driver drops
// such a connection when the pool takes it back (stdlib's ResetSession).
func (db *DB) pgConn(ctx context.Context, fn func(c *pgx.Conn) error) error {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: not a pgx connection (%T)", dc)
		}
		c := sc.Conn()
		err := fn(c)
		if c.PgConn().TxStatus() != 'I' && !c.IsClosed() {
			if _, rerr := c.Exec(ctx, "ROLLBACK"); rerr != nil {
				err = errors.Join(err, fmt.Errorf("store: rollback: %w", rerr))
			}
		}
		return err
	})
}

// batchResults reads a batch's answers in the order they were queued and
// keeps the first error, so that a caller reads them all and checks once.
type batchResults struct {
	br  pgx.BatchResults
	err error
}

func sendBatch(ctx context.Context, c *pgx.Conn, b *pgx.Batch) *batchResults {
	return &batchResults{br: c.SendBatch(ctx, b)}
}

// exec reads a statement's answer that has no rows (BEGIN, COMMIT, a write).
func (r *batchResults) exec() {
	if _, err := r.br.Exec(); err != nil && r.err == nil {
		r.err = err
	}
}

// count reads the answer of a write and returns how many rows it
// changed (0 after an error).
func (r *batchResults) count() int64 {
	tag, err := r.br.Exec()
	if err != nil && r.err == nil {
		r.err = err
	}
	return tag.RowsAffected()
}

// rows reads a statement's rows with scan, one call per row.
func (r *batchResults) rows(scan func(rows sqlRows) error) {
	rows, err := r.br.Query()
	if err == nil {
		for rows.Next() && err == nil {
			err = scan(rows)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil && r.err == nil {
		r.err = err
	}
}

// close ends the batch and returns its first error.
func (r *batchResults) close() error {
	if err := r.br.Close(); err != nil && r.err == nil {
		r.err = err
	}
	return r.err
}
