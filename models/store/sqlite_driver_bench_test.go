package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// BenchmarkSQLiteTx is the driver's own cost per write transaction, with
// no gpubook code: BEGIN IMMEDIATE, one insert of a row with a time, COMMIT,
// on the pool the store uses, under a cancellable context as in a request. It is what a change of SQLite driver changes
// first; the booking benchmarks show how much of it reaches a booking.
//
//	go test -run '^$' -bench SQLiteTx -benchtime 20000x ./models/store/
func BenchmarkSQLiteTx(b *testing.B) {
	db := storetest.Open(b, store.SQLite)
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE bench_tx (id INTEGER PRIMARY KEY, at DATETIME NOT NULL, note TEXT NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	// A request's context can be cancelled, and a driver may do extra work
	// per statement to honour that (context.Background cannot).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for b.Loop() {
		tx, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO bench_tx (at, note) VALUES (?, ?)", at, "raw"); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
