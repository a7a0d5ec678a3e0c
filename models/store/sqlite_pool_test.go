package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestSQLiteWritersTakeTurns checks the writer's turn of sqlite_pool.go: a
// second transaction waits for the first, gives up with its context, and
// gets its turn once the first ends (commit or rollback).
func TestSQLiteWritersTakeTurns(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	first := db.Gorm.Begin()
	if first.Error != nil {
		t.Fatal(first.Error)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err := db.Gorm.WithContext(short).Transaction(func(tx *gorm.DB) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second writer while the first runs: %v, want deadline exceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Gorm.Transaction(func(tx *gorm.DB) error { return tx.Exec("SELECT 1").Error }) }()
	time.Sleep(20 * time.Millisecond)
	if err := first.Rollback().Error; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("writer after the first ended: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("writer still waiting after the first ended")
	}
	// A commit passes the turn on as well, once only.
	tx := db.Gorm.Begin()
	if err := tx.Commit().Error; err != nil {
		t.Fatal(err)
	}
	tx.Rollback() // after the commit: must not release a turn twice
	for range 3 {
		if err := db.Gorm.Transaction(func(tx *gorm.DB) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSQLiteNewStatementInABusyTransaction: a transaction that runs a text
// not compiled yet while every other connection waits for its write lock
// finishes at once. Compiling took a second connection from the pool, and
// the two waited for each other until busy_timeout failed the waiting
// writers with "database is locked" (seen as a serve whose eight jobs all
// started together and none finished for ten seconds).
func TestSQLiteNewStatementInABusyTransaction(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	if err := db.Gorm.Exec("CREATE TABLE busy (v INTEGER)").Error; err != nil {
		t.Fatal(err)
	}
	const writers = 12 // more than the pool's connections
	errs := make(chan error, writers)
	err := db.Gorm.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("INSERT INTO busy (v) VALUES (1)").Error; err != nil {
			return err
		}
		for range writers {
			go func() { errs <- db.Gorm.Exec("INSERT INTO busy (v) VALUES (2)").Error }()
		}
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if st := db.SQL.Stats(); st.InUse == st.MaxOpenConnections || time.Now().After(deadline) {
				break
			}
		}
		return tx.Exec("INSERT INTO busy (v) VALUES (3) -- a text this process has not run before").Error
	})
	if err != nil {
		t.Fatal(err)
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Errorf("writer waiting for the transaction: %v", err)
		}
	}
	var n int
	if err := db.Gorm.Raw("SELECT count(*) FROM busy").Scan(&n).Error; err != nil || n != writers+2 {
		t.Errorf("rows = %d, %v, want %d", n, err, writers+2)
	}
}
