package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
)

// The rows an agent sends (usage minutes and their users, violations,
// idle reports) go to the database in pieces of about rowPiece bytes,
// encoded one after the other in one reused buffer: never as bound values
// (each value of each row cost the Go heap a boxed copy, a database/sql
// argument and the driver's conversion, about 40 times the bytes the agent
// sent for it) and never as one text of the whole batch (pgx copied a JSON
// text parameter twice more while it sent it). So what storing a batch
// costs the heap beside its decoded values is one piece, whatever the
// batch's size.
//
//   - SQLite: a piece is a JSON array of rows (arrays), unpacked by
//     json_each in one INSERT … SELECT per piece.
//   - PostgreSQL: a piece is COPY text, sent into a temporary table of the
//     connection (pgconn.CopyFrom, which sends it through a pooled 64 kB
//     buffer); one INSERT … SELECT per table then moves every row of the
//     batch from there to the table, emptying the temporary one. The
//     temporary tables are created once per connection and emptied at
//     every commit as well (ON COMMIT DELETE ROWS).

// rowPiece is the size a piece is sent at: a few dozen statements (or
// COPYs) for the largest batch, and a buffer of a tenth of its body.
// The longest row, an idle report of 64 GPUs, is under 4 kB.
const rowPiece = 32 << 10

// rowTable is how rows reach one table, with its conflict clause.
type rowTable struct {
	ncols    int
	sqlite   string // INSERT … SELECT … FROM json_each(?) …
	pgCreate string // CREATE TEMP TABLE IF NOT EXISTS …
	pgCopy   string // COPY temp (…) FROM STDIN
	pgMove   string // WITH rows AS (DELETE FROM temp RETURNING *) INSERT INTO table … SELECT … FROM rows …
}

// newRowTable describes table's columns cols ("a, b, c"), their
// PostgreSQL types, and what a conflict does (an ON CONFLICT clause).
func newRowTable(table, cols string, pgTypes []string, onConflict string) *rowTable {
	names := strings.Split(cols, ", ")
	if len(names) != len(pgTypes) {
		panic(fmt.Sprintf("store: %s: %d columns, %d types", table, len(names), len(pgTypes)))
	}
	sel := make([]string, len(names))
	defs := make([]string, len(names))
	for i, n := range names {
		sel[i] = fmt.Sprintf("value->>%d", i)
		defs[i] = n + " " + pgTypes[i]
	}
	temp := "agent_rows_in_" + table
	return &rowTable{
		ncols: len(names),
		// "WHERE true" keeps SQLite from reading ON CONFLICT as a join's ON.
		sqlite:   "INSERT INTO " + table + " (" + cols + ") SELECT " + strings.Join(sel, ", ") + " FROM json_each(?) WHERE true " + onConflict,
		pgCreate: "CREATE TEMP TABLE IF NOT EXISTS " + temp + " (" + strings.Join(defs, ", ") + ") ON COMMIT DELETE ROWS",
		pgCopy:   "COPY " + temp + " (" + cols + ") FROM STDIN",
		pgMove:   "WITH rows AS (DELETE FROM " + temp + " RETURNING *) INSERT INTO " + table + " (" + cols + ") SELECT " + cols + " FROM rows " + onConflict,
	}
}

// loadedTable is what a rowLoader knows of a table in its transaction.
type loadedTable struct {
	t        *rowTable
	affected int64 // SQLite: rows the pieces' INSERTs added or changed
	copied   int   // PostgreSQL: rows sent to the temporary table
}

// rowLoader stores rows of one transaction's tables, a piece at a time:
// rowLoader.table names the table of the rows that follow, the value
// methods append a row's columns in order, end closes the row, and done
// stores the table's last rows and says how many the table took.
type rowLoader struct {
	tx   *gorm.DB
	conn *sql.Conn // PostgreSQL: the transaction's connection, for COPY
	ctx  context.Context

	buf    []byte
	cur    *loadedTable // the table of the rows in buf
	rows   int          // rows in buf
	col    int          // columns of the open row
	tables []loadedTable
}

// bulkTx runs fn in a transaction with a rowLoader for it. On PostgreSQL
// the transaction runs on a connection of its own (gorm's Connection), so
// that the loader can reach the driver's connection for COPY.
func (db *DB) bulkTx(ctx context.Context, fn func(tx *gorm.DB, l *rowLoader) error) error {
	if db.Dialect != Postgres {
		return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			return fn(tx, &rowLoader{tx: tx, ctx: ctx})
		})
	}
	return db.Gorm.WithContext(ctx).Connection(func(c *gorm.DB) error {
		conn, ok := c.Statement.ConnPool.(*sql.Conn)
		if !ok {
			return fmt.Errorf("store: bulk load: no connection of its own (%T)", c.Statement.ConnPool)
		}
		return c.Transaction(func(tx *gorm.DB) error {
			return fn(tx, &rowLoader{tx: tx, conn: conn, ctx: ctx})
		})
	})
}

func (l *rowLoader) pg() bool { return l.conn != nil }

// table makes t the table of the rows that follow.
func (l *rowLoader) table(t *rowTable) error {
	if l.cur != nil && l.cur.t == t {
		return nil
	}
	if err := l.send(); err != nil {
		return err
	}
	for i := range l.tables {
		if l.tables[i].t == t {
			l.cur = &l.tables[i]
			return nil
		}
	}
	if l.pg() {
		if err := l.tx.Exec(t.pgCreate).Error; err != nil {
			return fmt.Errorf("store: bulk load: %w", err)
		}
	}
	if l.buf == nil {
		l.buf = make([]byte, 0, rowPiece+4<<10)
	}
	l.tables = append(l.tables, loadedTable{t: t})
	l.cur = &l.tables[len(l.tables)-1]
	return nil
}

// sep starts the next column (and the row and the piece, at their first).
func (l *rowLoader) sep() {
	switch {
	case l.col > 0 && l.pg():
		l.buf = append(l.buf, '\t')
	case l.col > 0:
		l.buf = append(l.buf, ',')
	case l.pg():
	case l.rows == 0:
		l.buf = append(l.buf, '[', '[')
	default:
		l.buf = append(l.buf, ',', '[')
	}
	l.col++
}

// Int appends an integer column.
func (l *rowLoader) Int(n int64) {
	l.sep()
	l.buf = strconv.AppendInt(l.buf, n, 10)
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
	l.buf = strconv.AppendFloat(l.buf, f, 'g', -1, 64)
}

// Bool appends a boolean column (SQLite stores booleans as 0 and 1).
func (l *rowLoader) Bool(v bool) {
	l.sep()
	switch {
	case l.pg() && v:
		l.buf = append(l.buf, 't')
	case l.pg():
		l.buf = append(l.buf, 'f')
	case v:
		l.buf = append(l.buf, '1')
	default:
		l.buf = append(l.buf, '0')
	}
}

// Null appends a NULL column.
func (l *rowLoader) Null() {
	l.sep()
	if l.pg() {
		l.buf = append(l.buf, '\\', 'N')
	} else {
		l.buf = append(l.buf, "null"...)
	}
}

// Time appends a time column in the store's SQLite time format, which
// PostgreSQL reads as well.
func (l *rowLoader) Time(t time.Time) {
	l.sep()
	if !l.pg() {
		l.buf = append(l.buf, '"')
	}
	l.buf = t.UTC().AppendFormat(l.buf, sqliteTime)
	if !l.pg() {
		l.buf = append(l.buf, '"')
	}
}

// Str appends a text column.
func (l *rowLoader) Str(s string) {
	l.sep()
	if l.pg() {
		l.buf = appendCopyText(l.buf, s)
	} else {
		l.buf = appendJSONString(l.buf, s)
	}
}

// StrJoin appends the text of parts joined by sep, which needs no escaping.
func (l *rowLoader) StrJoin(parts []string, sep byte) {
	l.sep()
	if !l.pg() {
		l.buf = append(l.buf, '"')
	}
	for i, p := range parts {
		if i > 0 {
			l.buf = append(l.buf, sep)
		}
		if l.pg() {
			l.buf = appendCopyText(l.buf, p)
		} else {
			l.buf = appendJSONChars(l.buf, p)
		}
	}
	if !l.pg() {
		l.buf = append(l.buf, '"')
	}
}

// end closes the row, and sends the piece once it is full.
func (l *rowLoader) end() error {
	if l.col != l.cur.t.ncols {
		return fmt.Errorf("store: bulk load: a row of %d columns, want %d", l.col, l.cur.t.ncols)
	}
	if l.pg() {
		l.buf = append(l.buf, '\n')
	} else {
		l.buf = append(l.buf, ']')
	}
	l.col = 0
	l.rows++
	if len(l.buf) >= rowPiece {
		return l.send()
	}
	return nil
}

// send stores the rows in buf: on SQLite into their table, on PostgreSQL
// into its temporary table.
func (l *rowLoader) send() error {
	if l.rows == 0 {
		return nil
	}
	if l.pg() {
		err := l.conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("not a pgx connection (%T)", dc)
			}
			_, err := c.Conn().PgConn().CopyFrom(l.ctx, bytes.NewReader(l.buf), l.cur.t.pgCopy)
			return err
		})
		if err != nil {
			return fmt.Errorf("store: bulk load: copy: %w", err)
		}
		l.cur.copied += l.rows
	} else {
		l.buf = append(l.buf, ']')
		// Bound without a copy: the driver copies the text into SQLite
		// while it binds it, and buf is not touched until then. SQLite
		// must get text (it would read a blob as its binary JSONB).
		r := l.tx.Exec(l.cur.t.sqlite, unsafe.String(unsafe.SliceData(l.buf), len(l.buf)))
		if r.Error != nil {
			return r.Error
		}
		l.cur.affected += r.RowsAffected
	}
	l.buf, l.rows = l.buf[:0], 0
	return nil
}

// done stores t's last rows and returns how many rows t took (inserted or
// updated) in this transaction; on PostgreSQL it moves them from the
// temporary table, so it is called once per table and transaction.
func (l *rowLoader) done(t *rowTable) (int64, error) {
	if l.cur != nil && l.cur.t == t {
		if err := l.send(); err != nil {
			return 0, err
		}
	}
	for i := range l.tables {
		lt := &l.tables[i]
		if lt.t != t {
			continue
		}
		if l.pg() && lt.copied > 0 {
			r := l.tx.Exec(t.pgMove)
			if r.Error != nil {
				return 0, r.Error
			}
			lt.affected, lt.copied = lt.affected+r.RowsAffected, 0
		}
		return lt.affected, nil
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

// appendCopyText appends s as a value of COPY's text format: backslash
// and the characters that separate values and rows escaped, invalid UTF-8
// replaced (PostgreSQL refuses it).
func appendCopyText(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			b = append(b, '\\', '\\')
			i++
		case c == '\t':
			b = append(b, '\\', 't')
			i++
		case c == '\n':
			b = append(b, '\\', 'n')
			i++
		case c == '\r':
			b = append(b, '\\', 'r')
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
		}
	}
	return b
}
