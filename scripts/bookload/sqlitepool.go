package main

import (
	"context"
	"database/sql"
	"fmt"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models/store"
)

// floorConn runs the SQLite floors' statements on the connection pool
// gpubook's store uses there (db.Gorm.ConnPool): transactions take the
// same writer's turn and every statement is compiled once and kept, as
// gpubook's are, but nothing of GORM or gpubook runs around them. On the
// bare *sql.DB the floor compiled every statement and its writers met
// SQLite's busy handler, so it measured less than gpubook's own path.
type floorConn struct{ pool gorm.ConnPool }

func newFloorConn(db *store.DB) floorConn { return floorConn{pool: db.Gorm.ConnPool} }

// exists runs a query outside a transaction and says whether it found a row.
func (c floorConn) exists(ctx context.Context, query string, args ...any) (bool, error) {
	rows, err := c.pool.QueryContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	found := rows.Next()
	return found, rows.Close()
}

// floorTx is a transaction on the store's pool.
type floorTx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// inTx runs f in a transaction of the store's pool and commits it.
func (c floorConn) inTx(ctx context.Context, f func(tx floorTx) error) error {
	b, ok := c.pool.(gorm.ConnPoolBeginner)
	if !ok {
		return fmt.Errorf("sql floor: the store's pool %T cannot begin a transaction", c.pool)
	}
	p, err := b.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	tx, ok := p.(interface {
		floorTx
		gorm.TxCommitter
	})
	if !ok {
		return fmt.Errorf("sql floor: transaction %T", p)
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
