package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// TestSQLiteStatementsCompiledOnce: on SQLite a statement the store runs,
// in a transaction (on the writer's connection) or not (on the pool), is
// compiled once there and kept for the next run, and gives the same
// answers; a text of several statements is run plainly.
func TestSQLiteStatementsCompiledOnce(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pool := db.Gorm.Config.ConnPool.(*writerPool)
	before := len(pool.stmts.m) // what GORM's SQLite dialect asked when it opened
	if err := db.Gorm.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL); CREATE TABLE u (id INTEGER)").Error; err != nil {
		t.Fatal(err)
	}
	if got := len(pool.stmts.m); got != before {
		t.Fatalf("two statements in one text were cached: %v", pool.stmts.m)
	}
	const insert, count = "INSERT INTO t (v) VALUES (?)", "SELECT count(*) FROM t WHERE v = ?"
	for i := range 3 {
		err := db.Gorm.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec(insert, "a").Error; err != nil {
				return err
			}
			var n int
			if err := tx.Raw(count, "a").Scan(&n).Error; err != nil {
				return err
			}
			if n != i+1 {
				t.Errorf("in transaction %d: count = %d, want %d", i, n, i+1)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.Gorm.Raw(count, "a").Scan(&n).Error; err != nil || n != i+1 {
			t.Errorf("outside: count = %d, %v, want %d", n, err, i+1)
		}
	}
	if got := len(pool.stmts.m) - before; got != 1 || pool.stmts.m[count] == nil {
		t.Errorf("pool's statements: %v, want the count added", pool.stmts.m)
	}
	if got := len(pool.w.stmts); got != 2 || pool.w.stmts[insert] == nil || pool.w.stmts[count] == nil {
		t.Errorf("writer's statements: %v, want the insert and the count, each once", pool.w.stmts)
	}
}

// TestSQLiteWriterConnection: the transactions' connection of
// sqlite_pool.go ends every transaction it begins. A failed statement's
// transaction rolls back whole; a commit SQLite refuses (a deferred foreign
// key) rolls back and passes the turn on; a context that ends inside a
// transaction rolls it back; an ended transaction's Rollback and
// statements leave the next transaction alone; a broken connection is
// replaced at the next transaction; Close returns at once when no
// transaction runs.
func TestSQLiteWriterConnection(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	pool := db.Gorm.Config.ConnPool.(*writerPool)
	if err := db.Gorm.Exec("CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (p INTEGER REFERENCES p (id))").Error; err != nil {
		t.Fatal(err)
	}
	count := func(table string) int {
		t.Helper()
		var n int
		if err := db.Gorm.Raw("SELECT count(*) FROM " + table).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	insertThen := func(ctx context.Context, then func(tx *gorm.DB) error) error {
		return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("INSERT INTO p (id) VALUES (NULL)").Error; err != nil {
				return err
			}
			return then(tx)
		})
	}
	if err := insertThen(ctx, func(tx *gorm.DB) error { return tx.Exec("INSERT INTO nowhere VALUES (1)").Error }); err == nil {
		t.Fatal("insert into a missing table passed")
	}
	if n := count("p"); n != 0 {
		t.Errorf("after a failed statement %d rows stayed, want 0", n)
	}
	// Straight on the pool, as sqlfloor does: GORM would roll back after
	// a failed commit itself.
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO p (id) VALUES (NULL)", "PRAGMA defer_foreign_keys = ON", "INSERT INTO c (p) VALUES (99)"} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.(*writerTx).Commit(); err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Fatalf("commit of a dangling reference: %v, want a foreign key error", err)
	}
	if n := count("p") + count("c"); n != 0 {
		t.Errorf("after a refused commit %d rows stayed, want 0", n)
	}
	short, cancel := context.WithCancel(ctx)
	err = insertThen(short, func(tx *gorm.DB) error {
		cancel()
		return tx.Exec("INSERT INTO p (id) VALUES (NULL)").Error
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("statement after the context ended: %v, want canceled", err)
	}
	// An ended transaction touches the writer's connection no more: a
	// deferred Rollback after its Commit, or a statement, while the next
	// transaction holds the connection, must not end or write into that one.
	a, err := pool.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx, "INSERT INTO p (id) VALUES (NULL)"); err != nil {
		t.Fatal(err)
	}
	if err := a.(*writerTx).Commit(); err != nil {
		t.Fatal(err)
	}
	b, err := pool.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ExecContext(ctx, "INSERT INTO p (id) VALUES (NULL)"); err != nil {
		t.Fatal(err)
	}
	if err := a.(*writerTx).Rollback(); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("rollback after commit: %v, want sql.ErrTxDone", err)
	}
	if _, err := a.ExecContext(ctx, "INSERT INTO p (id) VALUES (NULL)"); err == nil {
		t.Error("a statement on the committed transaction ran")
	}
	var n int
	if err := a.QueryRowContext(ctx, "SELECT count(*) FROM p").Scan(&n); err == nil {
		t.Error("a query on the committed transaction ran")
	}
	if err := b.(*writerTx).Commit(); err != nil {
		t.Fatalf("the next transaction's commit: %v", err)
	}
	if n := count("p"); n != 2 {
		t.Errorf("%d rows after two committed inserts, want 2", n)
	}
	if _, err := db.SQL.ExecContext(ctx, "DELETE FROM p"); err != nil {
		t.Fatal(err)
	}
	pool.w.conn.Close() // broken under the pool's feet
	if err := insertThen(ctx, func(tx *gorm.DB) error { return nil }); err != nil {
		t.Fatalf("transaction after the connection broke: %v", err)
	}
	if n := count("p"); n != 1 {
		t.Errorf("%d rows, want the last transaction's 1", n)
	}
	start := time.Now()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > writerWait/2 {
		t.Errorf("Close took %s with no transaction running", d)
	}
}
