package telemetry

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models/store"
)

// The rows an agent sends (usage minutes and their users, violations,
// idle reports) go to the database as JSON arrays, one per row, gathered
// for each table in a buffer of about rowPiece bytes that is sent when it
// is full and reused: never as bound values (each value of each row cost
// the Go heap a boxed copy, a database/sql argument and the driver's
// conversion, about 40 times the bytes the agent sent for it) and never
// as one text of the whole batch (pgx copied a text parameter twice more
// while it sent it). So what storing a batch costs the heap beside its
// decoded values is a piece per table, whatever the batch's size.
//
//   - SQLite: a piece is one JSON array of the rows, unpacked by json_each
//     in one INSERT … SELECT per piece.
//   - PostgreSQL: a piece is one row per line. A table whose rows fit in
//     one piece (the steady state: a minute of a node) gets them in one
//     INSERT … SELECT, the piece bound as one parameter. A larger one gets
//     its pieces sent with COPY (pgconn.CopyFrom, through a pooled 64 kB
//     buffer) into a temporary table of the connection, and one
//     INSERT … SELECT at the end moves them to the table and empties the
//     temporary one (created once per connection, and emptied at every
//     commit as well: ON COMMIT DELETE ROWS). Not a piece bound to an
//     INSERT each: pgx builds every parameter, and then its message, in
//     buffers it shrinks after each statement, so a bound piece cost the
//     heap about four times its size, and the largest agent bodies broke
//     their memory bound (3.8–5.4 × the body; TestAgentBodyMemoryBound).
//     Either way every table is written when its rows are done, in the
//     order the caller says: the usage tables must be written GPU-minutes
//     first (usageTables).

// rowPiece is the size a piece is sent at: a few dozen statements (or
// COPYs) for the largest batch, and a buffer of a thirtieth of its body.
// The longest row, an idle report of 64 GPUs, is under 4 kB.
const rowPiece = 32 << 10

// rowTable is how rows reach one table, with its conflict clause.
type rowTable struct {
	ncols    int
	sqlite   string // INSERT … SELECT … FROM json_each(?) …
	pgInsert string // INSERT … SELECT … FROM the lines of one parameter …
	pgCreate string // CREATE TEMP TABLE IF NOT EXISTS …
	pgCopy   string // COPY temp FROM STDIN
	pgMove   string // WITH rows AS (DELETE FROM temp RETURNING r) INSERT INTO table … SELECT … FROM rows …
}

// newRowTable describes table's columns cols ("a, b, c"), their
// PostgreSQL types, and what a conflict does (an ON CONFLICT clause).
func newRowTable(table, cols string, pgTypes []string, onConflict string) *rowTable {
	names := strings.Split(cols, ", ")
	if len(names) != len(pgTypes) {
		panic(fmt.Sprintf("store: %s: %d columns, %d types", table, len(names), len(pgTypes)))
	}
	sel := make([]string, len(names))
	pgSel := make([]string, len(names))
	for i := range names {
		sel[i] = fmt.Sprintf("value->>%d", i)
		pgSel[i] = fmt.Sprintf("(r->>%d)::%s", i, pgTypes[i])
	}
	insert := "INSERT INTO " + table + " (" + cols + ") SELECT "
	temp := "agent_rows_in_" + table
	return &rowTable{
		ncols: len(names),
		// "WHERE true" keeps SQLite from reading ON CONFLICT as a join's ON.
		sqlite:   insert + strings.Join(sel, ", ") + " FROM json_each(?) WHERE true " + onConflict,
		pgInsert: insert + strings.Join(pgSel, ", ") + " FROM unnest(string_to_array(?::text, E'\\n')::jsonb[]) AS r " + onConflict,
		pgCreate: "CREATE TEMP TABLE IF NOT EXISTS " + temp + " (r jsonb NOT NULL) ON COMMIT DELETE ROWS",
		// CSV with a quote and a delimiter that JSON text never holds
		// raw (control characters are escaped): each line is read as it
		// is, backslashes and all.
		pgCopy: "COPY " + temp + " (r) FROM STDIN WITH (FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')",
		pgMove: "WITH rows AS (DELETE FROM " + temp + " RETURNING r) " + insert + strings.Join(pgSel, ", ") + " FROM rows " + onConflict,
	}
}

// loadedTable is a table a rowLoader writes in its transaction.
type loadedTable struct {
	t        *rowTable
	buf      []byte // the rows not sent yet
	rows     int    // how many
	affected int64  // rows the table took (inserted or updated)
	copied   bool   // PostgreSQL: rows wait in the temporary table
}

// rowLoader writes rows of one transaction's tables, a piece at a time:
// table names the table of the rows that follow, the value methods append
// a row's columns in order, end closes the row, and done writes the
// table's last rows and says how many the table took.
type rowLoader struct {
	tx    *gorm.DB
	conn  *sql.Conn // PostgreSQL: the transaction's connection, for COPY
	ctx   context.Context
	lines bool // PostgreSQL's pieces (a row per line)
	// pieceCap is the room a table's piece starts with (0: a whole piece);
	// a small batch's loader needs a few kB, not 36 a table.
	pieceCap int

	cur    *loadedTable // the table of the open row
	col    int          // columns of the open row
	tables []loadedTable
}

// bulkTx runs fn in a transaction with a rowLoader for it. On PostgreSQL
// the transaction runs on a connection of its own (gorm's Connection), so
// that the loader can reach the driver's connection for COPY.
func (db *Store) bulkTx(ctx context.Context, fn func(tx *gorm.DB, l *rowLoader) error) error {
	if db.st.Dialect != store.Postgres {
		return db.st.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			return fn(tx, &rowLoader{tx: tx, ctx: ctx})
		})
	}
	return db.st.Gorm.WithContext(ctx).Connection(func(c *gorm.DB) error {
		conn, ok := c.Statement.ConnPool.(*sql.Conn)
		if !ok {
			return fmt.Errorf("store: bulk load: no connection of its own (%T)", c.Statement.ConnPool)
		}
		return c.Transaction(func(tx *gorm.DB) error {
			return fn(tx, &rowLoader{tx: tx, conn: conn, ctx: ctx, lines: true})
		})
	})
}

func (l *rowLoader) pg() bool { return l.lines }

// table makes t the table of the rows that follow.
func (l *rowLoader) table(t *rowTable) {
	if l.cur != nil && l.cur.t == t {
		return
	}
	if l.tables == nil {
		l.tables = make([]loadedTable, 0, 2) // usage writes two tables
	}
	for i := range l.tables {
		if l.tables[i].t == t {
			l.cur = &l.tables[i]
			return
		}
	}
	room := l.pieceCap
	if room == 0 {
		room = rowPiece + 4<<10
	}
	l.tables = append(l.tables, loadedTable{t: t, buf: make([]byte, 0, room)})
	l.cur = &l.tables[len(l.tables)-1]
}

// sep starts the next column, and the row at its first.
func (l *rowLoader) sep() {
	lt := l.cur
	switch {
	case l.col > 0:
		lt.buf = append(lt.buf, ',')
	case l.pg():
		lt.buf = append(lt.buf, '[')
	case lt.rows > 0:
		lt.buf = append(lt.buf, ',', '[')
	default:
		lt.buf = append(lt.buf, '[', '[')
	}
	l.col++
}

// Int appends an integer column.
func (l *rowLoader) Int(n int64) {
	l.sep()
	l.cur.buf = strconv.AppendInt(l.cur.buf, n, 10)
}

// IntOrNull appends n, or NULL when n is 0 (no booking, no user).
func (l *rowLoader) IntOrNull(n int64) {
	if n == 0 {
		l.Null()
		return
	}
	l.Int(n)
}

// Float appends a floating-point column.
func (l *rowLoader) Float(f float64) {
	l.sep()
	l.cur.buf = strconv.AppendFloat(l.cur.buf, f, 'g', -1, 64)
}

// Bool appends a boolean column as 0 or 1 (what SQLite stores; PostgreSQL
// reads both as a boolean).
func (l *rowLoader) Bool(v bool) {
	l.sep()
	if v {
		l.cur.buf = append(l.cur.buf, '1')
	} else {
		l.cur.buf = append(l.cur.buf, '0')
	}
}

// Null appends a NULL column.
func (l *rowLoader) Null() {
	l.sep()
	l.cur.buf = append(l.cur.buf, "null"...)
}

// Time appends a time column in the store's SQLite time format, which
// PostgreSQL reads as well.
func (l *rowLoader) Time(t time.Time) {
	l.sep()
	l.cur.buf = appendJSONTime(l.cur.buf, t)
}

// Str appends a text column.
func (l *rowLoader) Str(s string) {
	l.sep()
	l.cur.buf = appendJSONString(l.cur.buf, s)
}

// StrJoin appends the text of parts joined by sep.
func (l *rowLoader) StrJoin(parts []string, sep byte) {
	l.sep()
	b := append(l.cur.buf, '"')
	for i, p := range parts {
		if i > 0 {
			b = append(b, sep)
		}
		b = appendJSONChars(b, p)
	}
	l.cur.buf = append(b, '"')
}

// end closes the row, and sends the table's piece once it is full.
func (l *rowLoader) end() error {
	lt := l.cur
	if l.col != lt.t.ncols {
		return fmt.Errorf("store: bulk load: a row of %d columns, want %d", l.col, lt.t.ncols)
	}
	if l.pg() {
		lt.buf = append(lt.buf, ']', '\n')
	} else {
		lt.buf = append(lt.buf, ']')
	}
	l.col = 0
	lt.rows++
	if len(lt.buf) >= rowPiece {
		return l.send(lt)
	}
	return nil
}

// send writes lt's rows not sent yet: on SQLite into the table, on
// PostgreSQL into its temporary table.
func (l *rowLoader) send(lt *loadedTable) error {
	if lt.rows == 0 {
		return nil
	}
	if l.pg() {
		if !lt.copied {
			if err := l.tx.Exec(lt.t.pgCreate).Error; err != nil {
				return fmt.Errorf("store: bulk load: %w", err)
			}
		}
		err := l.conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("not a pgx connection (%T)", dc)
			}
			_, err := c.Conn().PgConn().CopyFrom(l.ctx, bytes.NewReader(lt.buf), lt.t.pgCopy)
			return err
		})
		if err != nil {
			return fmt.Errorf("store: bulk load: copy: %w", err)
		}
		lt.copied = true
	} else {
		lt.buf = append(lt.buf, ']')
		n, err := l.exec(lt.t.sqlite, lt.buf)
		if err != nil {
			return err
		}
		lt.affected += n
	}
	lt.buf, lt.rows = lt.buf[:0], 0
	return nil
}

// exec runs query with text, a piece, as its one parameter, bound without
// a copy: the drivers copy it while they bind it, and the piece is not
// touched until then. (SQLite must get text: it reads a blob as JSONB.)
func (l *rowLoader) exec(query string, text []byte) (int64, error) {
	r := l.tx.Exec(query, unsafe.String(unsafe.SliceData(text), len(text)))
	return r.RowsAffected, r.Error
}

// done writes t's last rows and returns how many rows t took (inserted
// or updated) in this transaction. It is called once per table after its
// last row (the count then covers the table), or after each row to write
// them one statement at a time; the tables are written in the order of
// these calls.
func (l *rowLoader) done(t *rowTable) (int64, error) {
	for i := range l.tables {
		lt := &l.tables[i]
		if lt.t != t {
			continue
		}
		if !l.pg() {
			err := l.send(lt)
			return lt.affected, err
		}
		if !lt.copied { // one piece: one statement
			if lt.rows == 0 {
				return 0, nil
			}
			n, err := l.exec(t.pgInsert, lt.buf[:len(lt.buf)-1]) // no empty last line
			lt.buf, lt.rows = lt.buf[:0], 0
			return n, err
		}
		if err := l.send(lt); err != nil {
			return 0, err
		}
		r := l.tx.Exec(t.pgMove)
		if r.Error != nil {
			return 0, r.Error
		}
		lt.copied = false
		return r.RowsAffected, nil
	}
	return 0, nil
}

// repeatedKey reports whether two of n elements have the same key. It
// sorts the keys rather than filling a set: n strings cost a third of
// what a map of them does.
func repeatedKey(n int, key func(i int) string) bool {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = key(i)
	}
	slices.Sort(keys)
	for i := 1; i < n; i++ {
		if keys[i] == keys[i-1] {
			return true
		}
	}
	return false
}
