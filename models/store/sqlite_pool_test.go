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
