package store

import (
	"context"
	"path/filepath"
	"testing"

	"gorm.io/gorm"
)

// TestSQLiteStatementsCompiledOnce: on SQLite a statement the store runs,
// in a transaction or not, is compiled once and kept for the next run, and
// gives the same answers; a text of several statements is run plainly.
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
	if got := len(pool.stmts.m) - before; got != 2 {
		t.Errorf("cached statements = %d, want 2 (the insert and the count, each once)", got)
	}
	if pool.stmts.m[insert] == nil || pool.stmts.m[count] == nil {
		t.Errorf("cache holds %v, want the insert and the count", pool.stmts.m)
	}
}
