package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// The statements of what API users do most — a token's look-up, a booking,
// its release — and the reads a booking is judged on run here without
// GORM: on the same connection pool (on SQLite the writer's turn and the
// compiled statements of sqlite_stmts.go) or transaction, through
// database/sql, with their columns scanned by hand. With the statements
// this saved (16 → 10 per book-now + release pair on SQLite), the pair's
// CPU fell by about a third on SQLite and a half on PostgreSQL
// (BenchmarkBookNowRelease in web, docs/performance.md). Where a dialect
// needs a statement of its own (PostgreSQL's data-modifying CTEs, SQLite's
// RETURNING per row), each is written once, in a rawSQL pair or a branch
// on the dialect: one implementation per dialect.

// rawSQL is one statement in both dialects' parameter markers: "?" on
// SQLite, "$1", "$2"… on PostgreSQL. Its texts are made once, at start.
type rawSQL struct{ sqlite, postgres string }

// newRawSQL takes a statement written with "?" markers (none inside a
// string literal).
func newRawSQL(q string) rawSQL { return rawSQL{sqlite: q, postgres: DollarParams(q)} }

// DollarParams numbers the "?" markers of q as PostgreSQL's $n (none may
// stand inside a string literal).
func DollarParams(q string) string {
	out := make([]byte, 0, len(q)+16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] != '?' {
			out = append(out, q[i])
			continue
		}
		n++
		out = append(out, '$')
		out = strconv.AppendInt(out, int64(n), 10)
	}
	return string(out)
}

// listSQL takes a statement written with "?" markers whose every "IN ?"
// takes a list (listArg): on PostgreSQL an array parameter (= ANY), on
// SQLite a JSON array unpacked by json_each. Either way one text, planned
// once, whatever the list's length, and one parameter, not one a value.
func listSQL(q string) rawSQL {
	return rawSQL{sqlite: strings.ReplaceAll(q, " IN ?", " IN (SELECT value FROM json_each(?))"),
		postgres: DollarParams(strings.ReplaceAll(q, " IN ?", " = ANY(?)"))}
}

// WhereIDIn keeps q's rows whose col is one of ids, the whole list bound
// as one text parameter, as listSQL does for a raw statement: a bigint[]
// literal on PostgreSQL, a JSON array on SQLite. GORM's own "col IN ?"
// binds a parameter per value (SQLite takes at most 32,766) and makes a
// new statement text for every length.
func WhereIDIn(q *gorm.DB, col string, ids []int64) *gorm.DB {
	if q.Dialector.Name() == Postgres {
		return q.Where(col+" = ANY(CAST(? AS bigint[]))", pgIDArray(ids))
	}
	return q.Where(col+" IN (SELECT value FROM json_each(?))", "["+joinIDs(ids)+"]")
}

// listArg is strs as the parameter of a listSQL list: the slice itself
// for pgx (an array), JSON text for SQLite (which reads a blob as JSONB).
func (r raw) listArg(strs []string) (any, error) {
	if r.dialect == Postgres {
		return strs, nil
	}
	b, err := json.Marshal(strs)
	return string(b), err
}

// idListArg is ids as the parameter of a listSQL list, as listArg.
func (r raw) idListArg(ids []int64) any {
	if r.dialect == Postgres {
		return ids
	}
	return "[" + joinIDs(ids) + "]"
}

// raw runs rawSQL statements on a connection of the store: its pool, or a
// transaction GORM began on that pool.
type raw struct {
	conn    gorm.ConnPool
	ctx     context.Context
	dialect string
}

// rawTx is tx's transaction (or pool), with tx's context.
func rawTx(tx *gorm.DB) raw {
	return raw{conn: tx.Statement.ConnPool, ctx: tx.Statement.Context, dialect: tx.Dialector.Name()}
}

// raw is the store's pool.
func (db *DB) raw(ctx context.Context) raw {
	return raw{conn: db.Gorm.ConnPool, ctx: ctx, dialect: db.Dialect}
}

func (r raw) text(s rawSQL) string {
	if r.dialect == Postgres {
		return s.postgres
	}
	return s.sqlite
}

func (r raw) exec(s rawSQL, args ...any) (sql.Result, error) {
	return r.conn.ExecContext(r.ctx, r.text(s), args...)
}

func (r raw) query(s rawSQL, args ...any) (*sql.Rows, error) {
	return r.conn.QueryContext(r.ctx, r.text(s), args...)
}

func (r raw) queryRow(s rawSQL, args ...any) *sql.Row {
	return r.conn.QueryRowContext(r.ctx, r.text(s), args...)
}

// queryAll runs s and scans every row with scan, in order.
func queryAll[T any](r raw, s rawSQL, scan func(*sql.Rows) (T, error), args ...any) ([]T, error) {
	rows, err := r.query(s, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// uncancelled is ctx without its end, for the few short statements of what
// API users do most (a token's look-up, a booking, a release), or ctx's
// error when it has ended already. With a context that can end,
// database/sql starts a goroutine to watch it for every transaction and
// every result set, and the SQLite driver another for every statement,
// commit included (and sets a progress handler): about thirty goroutines
// and their wake-ups for a book-now + release pair, for statements that
// take microseconds. A request whose client leaves while they run
// finishes them, and its answer is dropped; on SQLite its wait for the
// writer's turn is still bounded (writerWait).
func uncancelled(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}
