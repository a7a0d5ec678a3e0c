package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"
)

// writerWait is how long a transaction waits for its turn to write, as
// long as the DSN's busy_timeout lets SQLite wait for its lock.
const writerWait = 10 * time.Second

// writerPool is the connection pool GORM sees on SQLite. Every transaction
// there begins IMMEDIATE (the DSN's _txlock), so only one runs at a time
// anyway; writerPool makes this process's transactions queue for that turn
// on a channel instead of in SQLite's busy handler, which polls with sleeps
// of up to 100 ms and so left the lock idle while writers slept (p99 of a
// booking at 8 clients: 100+ ms for a 1 ms transaction). Other processes
// writing the same file still meet busy_timeout as before.
type writerPool struct {
	*sql.DB
	turn  chan struct{} // holds a token while a transaction runs
	stmts *stmtCache
}

func newWriterPool(db *sql.DB) *writerPool {
	return &writerPool{DB: db, turn: make(chan struct{}, 1), stmts: newStmtCache(db)}
}

// BeginTx waits for the writer's turn, then begins the transaction; the
// turn passes on at its commit or rollback.
func (p *writerPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	wait := time.NewTimer(writerWait)
	defer wait.Stop()
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-wait.C:
		return nil, fmt.Errorf("store: waited %s for a write transaction: database is locked", writerWait)
	}
	tx, err := p.DB.BeginTx(ctx, opts)
	if err != nil {
		<-p.turn
		return nil, err
	}
	return &writerTx{Tx: tx, turn: p.turn, stmts: p.stmts}, nil
}

// GetDBConn gives GORM's DB() the underlying pool.
func (p *writerPool) GetDBConn() (*sql.DB, error) { return p.DB, nil }

// writerTx is a transaction holding the writer's turn.
type writerTx struct {
	*sql.Tx
	turn  chan struct{}
	once  sync.Once
	stmts *stmtCache
	// missed are the texts this transaction ran uncompiled (writerTx.stmt).
	missed []string
}

func (t *writerTx) Commit() error {
	defer t.release()
	return t.Tx.Commit()
}

func (t *writerTx) Rollback() error {
	defer t.release()
	return t.Tx.Rollback()
}

func (t *writerTx) release() {
	t.once.Do(func() {
		<-t.turn
		t.compileMissed()
	})
}
