package store

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// stmtCacheMax bounds how many SQL texts stay compiled. The store's own
// statements number a few dozen; texts that grow with a list (IN (?, ?, …))
// add one per length seen, so the bound only stops an unusual caller from
// growing the cache without end.
const stmtCacheMax = 512

// stmtCache keeps every SQL text the store runs on SQLite compiled, once
// per connection: modernc's SQLite otherwise parses and plans each
// statement again on every execution, half of a booking's database time
// (a booking and its release run about fifteen statements). database/sql
// prepares a cached *sql.Stmt again on each connection that first runs it
// and keeps it there, also when it runs inside a transaction
// (Tx.StmtContext).
type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// stmt returns query compiled, or nil when it is not to be cached (several
// statements in one text, a full cache, or an error preparing it, which
// the plain execution then reports). Compiling takes a connection from the
// pool, so a transaction never uses this cache (see writerTx.stmt), and it
// runs without the cache's lock held: a caller waiting for a connection
// must not keep others from the statements already compiled.
func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	if s, ok := c.cached(query); ok || !c.worthCompiling(query) {
		return s
	}
	s, err := c.db.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.m[query]; ok || len(c.m) >= stmtCacheMax {
		s.Close()
		return kept
	}
	c.m[query] = s
	return s
}

// cached returns query's compiled statement if there is one.
func (c *stmtCache) cached(query string) (*sql.Stmt, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s, ok := c.m[query]
	return s, ok
}

// worthCompiling is false for a text of several statements and once the
// cache is full (a text compiled then would be closed and run plainly).
func (c *stmtCache) worthCompiling(query string) bool {
	c.mu.RLock()
	full := len(c.m) >= stmtCacheMax
	c.mu.RUnlock()
	return !full && oneStatement(query)
}

// oneStatement: query holds one statement (a compiled statement runs only
// the first of several).
func oneStatement(query string) bool {
	return !strings.Contains(strings.TrimRight(strings.TrimSpace(query), ";"), ";")
}

// ExecContext, QueryContext and QueryRowContext run outside a transaction
// on the cached statement.
func (p *writerPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := p.stmts.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return p.DB.ExecContext(ctx, query, args...)
}

func (p *writerPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.stmts.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.DB.QueryContext(ctx, query, args...)
}

func (p *writerPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.stmts.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.DB.QueryRowContext(ctx, query, args...)
}

// stmt returns query compiled on the writer's connection, or nil when it
// is not to be kept (several statements in one text, stmtCacheMax reached,
// or an error compiling it, which the plain execution then reports). It
// compiles on the transaction's own connection: taking a second one from
// the pool while this one holds SQLite's write lock, with every other
// connection waiting for that lock, left the two waiting for each other
// until busy_timeout failed them all (TestSQLiteNewStatementInABusyTransaction).
func (t *writerTx) stmt(ctx context.Context, query string) *sql.Stmt {
	if t.ended.Load() {
		return nil
	}
	w := t.pool.w
	if s, ok := w.stmts[query]; ok {
		return s
	}
	if len(w.stmts) >= stmtCacheMax || !oneStatement(query) {
		return nil
	}
	s, err := w.conn.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil
	}
	w.stmts[query] = s
	return s
}

// ExecContext, QueryContext, QueryRowContext and PrepareContext run inside
// the transaction, on the writer's connection.
func (t *writerTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := t.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.conn().ExecContext(ctx, query, args...)
}

func (t *writerTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return t.conn().QueryContext(ctx, query, args...)
}

func (t *writerTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.conn().QueryRowContext(ctx, query, args...)
}

func (t *writerTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.conn().PrepareContext(ctx, query)
}
