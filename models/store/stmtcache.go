package store

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
)

// maxCachedStmts bounds the statement cache; statements beyond it run
// unprepared, as they would without the cache.
const maxCachedStmts = 256

// stmtPool is the connection pool GORM sees on SQLite: every statement it
// runs is prepared once per connection and reused, because modernc's SQLite
// compiles each statement anew otherwise, and compiling cost more than
// running for the booking path's short queries. PostgreSQL needs none of
// it: pgx caches its prepared statements itself.
//
// GORM's own PrepareStmt does not serve here: inside a transaction it
// prepares on the transaction, so that the statement dies with it.
type stmtPool struct {
	db     *sql.DB
	mu     sync.RWMutex
	stmts  map[string]*sql.Stmt // nil: being prepared, or not worth it
	closed bool
}

func newStmtPool(db *sql.DB) *stmtPool {
	return &stmtPool{db: db, stmts: map[string]*sql.Stmt{}}
}

// stmt returns the prepared statement for query, or nil: then the caller
// runs it unprepared. A query seen for the first time is prepared in the
// background, never while the caller waits: preparing takes a connection
// of its own, and a caller inside a transaction may hold the last one.
// Several statements in one string are never cached.
func (p *stmtPool) stmt(query string) *sql.Stmt {
	p.mu.RLock()
	s, seen := p.stmts[query]
	p.mu.RUnlock()
	if seen || strings.Contains(query, ";") {
		return s // nil while it is being prepared, or if it failed to
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, seen := p.stmts[query]; seen || len(p.stmts) >= maxCachedStmts {
		return nil
	}
	p.stmts[query] = nil
	go p.prepare(query)
	return nil
}

// prepare prepares query on the pool and caches it; a failure leaves nil
// in the cache, so that the query runs unprepared from then on.
func (p *stmtPool) prepare(query string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := p.db.PrepareContext(ctx, query)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		return
	}
	if p.closed {
		s.Close()
		return
	}
	p.stmts[query] = s
}

func (p *stmtPool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return p.db.PrepareContext(ctx, query)
}

func (p *stmtPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := p.stmt(query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return p.db.ExecContext(ctx, query, args...)
}

func (p *stmtPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.stmt(query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.db.QueryContext(ctx, query, args...)
}

func (p *stmtPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.stmt(query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

// BeginTx starts a transaction whose statements use the same cache.
func (p *stmtPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	tx, err := p.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &stmtTx{Tx: tx, pool: p}, nil
}

// GetDBConn gives GORM's DB() the underlying pool.
func (p *stmtPool) GetDBConn() (*sql.DB, error) { return p.db, nil }

// stmtTx runs a transaction's statements through the pool's cache: a
// statement prepared on the pool is bound to the transaction's connection
// (database/sql reuses what that connection already prepared).
type stmtTx struct {
	*sql.Tx
	pool *stmtPool
}

func (t *stmtTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := t.pool.stmt(query); s != nil {
		return t.Tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t *stmtTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := t.pool.stmt(query); s != nil {
		return t.Tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t *stmtTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := t.pool.stmt(query); s != nil {
		return t.Tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// GetDBConn gives GORM's DB() the underlying pool.
func (t *stmtTx) GetDBConn() (*sql.DB, error) { return t.pool.db, nil }

// close closes the cached statements (before the pool itself).
func (p *stmtPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for q, s := range p.stmts {
		if s != nil {
			s.Close()
		}
		delete(p.stmts, q)
	}
}
