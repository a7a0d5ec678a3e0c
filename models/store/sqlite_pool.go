package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// writerWait is how long a transaction waits for its turn to write, as
// long as the DSN's busy_timeout lets SQLite wait for its lock.
const writerWait = 10 * time.Second

// writerPool is the connection pool GORM sees on SQLite. Every transaction
// there begins IMMEDIATE, so only one runs at a time anyway; writerPool
// makes this process's transactions queue for that turn on a channel
// instead of in SQLite's busy handler, which polls with sleeps of up to
// 100 ms and so left the lock idle while writers slept (p99 of a booking at
// 8 clients: 100+ ms for a 1 ms transaction). Other processes writing the
// same file still meet busy_timeout as before.
//
// The transactions all run on one connection kept for them (writerConn),
// begun and ended with plain BEGIN IMMEDIATE and COMMIT statements rather
// than as a *sql.Tx: database/sql starts a goroutine to watch every
// transaction, and another for every result set read inside one, whatever
// the context (five for a book-now + release pair, each a hand-off that
// wakes another thread). Statements outside a transaction run on the rest
// of the pool.
type writerPool struct {
	*sql.DB
	turn  chan struct{} // holds a token while a transaction runs
	stmts *stmtCache    // compiled for the statements outside a transaction
	w     *writerConn   // the transactions' connection; used only by the turn's holder
	// ended is a closed connection, which a transaction's statements run
	// on once it has ended: they fail (sql.ErrConnDone) instead of running
	// on the writer's connection, in whatever transaction holds it by then.
	// Set under the first turn, never changed.
	ended *sql.Conn
}

func newWriterPool(db *sql.DB) *writerPool {
	return &writerPool{DB: db, turn: make(chan struct{}, 1), stmts: newStmtCache(db)}
}

// writerConn is the connection the transactions run on, with the
// statements compiled on it.
type writerConn struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// BeginTx waits for the writer's turn, then begins the transaction on the
// writer's connection; the turn passes on at its commit or rollback. opts
// must be nil: SQLite's transactions are all serializable and writable.
func (p *writerPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	if opts != nil && (opts.ReadOnly || opts.Isolation != sql.LevelDefault) {
		return nil, errors.New("store: SQLite transactions take no options")
	}
	wait := time.NewTimer(writerWait)
	defer wait.Stop()
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-wait.C:
		return nil, fmt.Errorf("store: waited %s for a write transaction: database is locked", writerWait)
	}
	if p.ended == nil {
		c, err := p.DB.Conn(ctx)
		if err != nil {
			<-p.turn
			return nil, err
		}
		c.Close()
		p.ended = c
	}
	t := &writerTx{pool: p}
	if err := t.begin(ctx); err != nil {
		t.release()
		return nil, err
	}
	return t, nil
}

// GetDBConn gives GORM's DB() the underlying pool.
func (p *writerPool) GetDBConn() (*sql.DB, error) { return p.DB, nil }

// close closes the writer's connection, once no transaction runs (or
// writerWait has passed), so that the pool can close.
func (p *writerPool) close() {
	select {
	case p.turn <- struct{}{}:
		defer func() { <-p.turn }()
	case <-time.After(writerWait):
		return
	}
	p.dropConn()
}

// dropConn closes the writer's connection; the next transaction takes
// another from the pool. The turn's holder calls it.
func (p *writerPool) dropConn() {
	if p.w == nil {
		return
	}
	for _, s := range p.w.stmts {
		s.Close()
	}
	p.w.conn.Close()
	p.w = nil
}

// writerTx is a transaction holding the writer's turn, on its connection.
// Once it has ended, Commit and Rollback return sql.ErrTxDone and its
// statements fail, as a *sql.Tx's do: the writer's connection may be in
// the next transaction by then (a deferred Rollback after the Commit would
// roll that one back).
type writerTx struct {
	pool  *writerPool
	ended atomic.Bool // set by the first Commit or Rollback, which passes the turn on
}

// conn is the connection the transaction's statements run on: the
// writer's, or a closed one once it has ended.
func (t *writerTx) conn() *sql.Conn {
	if t.ended.Load() {
		return t.pool.ended
	}
	return t.pool.w.conn
}

// begin takes the writer's connection (from the pool the first time, or
// again after it broke) and begins the transaction on it.
func (t *writerTx) begin(ctx context.Context) error {
	p := t.pool
	for try := 0; ; try++ {
		if p.w == nil {
			c, err := p.DB.Conn(ctx)
			if err != nil {
				return err
			}
			p.w = &writerConn{conn: c, stmts: map[string]*sql.Stmt{}}
		}
		_, err := p.w.conn.ExecContext(ctx, "BEGIN IMMEDIATE")
		if !t.checkConn(err) || try > 0 {
			return err
		}
	}
}

// checkConn lets the writer's connection go when err says it is broken,
// and says so.
func (t *writerTx) checkConn(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		t.pool.dropConn()
		return true
	}
	return false
}

// Commit commits; should the commit fail, the transaction is rolled back,
// as a *sql.Tx's would be.
func (t *writerTx) Commit() error {
	if t.ended.Swap(true) {
		return sql.ErrTxDone
	}
	defer t.release()
	_, err := t.pool.w.conn.ExecContext(context.Background(), "COMMIT")
	if err != nil {
		t.rollback()
	}
	return err
}

func (t *writerTx) Rollback() error {
	if t.ended.Swap(true) {
		return sql.ErrTxDone
	}
	defer t.release()
	return t.rollback()
}

// rollback ends the transaction; one SQLite ended itself (after some
// errors it rolls back on its own) is not an error.
func (t *writerTx) rollback() error {
	if t.pool.w == nil {
		return nil
	}
	_, err := t.pool.w.conn.ExecContext(context.Background(), "ROLLBACK")
	if err != nil && strings.Contains(err.Error(), "no transaction is active") {
		return nil
	}
	t.checkConn(err)
	return err
}

// release passes the writer's turn on: once, from the Commit or Rollback
// that ended the transaction, or from BeginTx when it could not begin.
func (t *writerTx) release() { <-t.pool.turn }
