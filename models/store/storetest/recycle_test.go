package storetest_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func TestMain(m *testing.M) { storetest.Run(m) }

// dbOID identifies the PostgreSQL database db is on (a recycled one is
// renamed; its oid stays).
func dbOID(t *testing.T, db *store.DB) int64 {
	t.Helper()
	var oid int64
	if err := db.SQL.QueryRow("SELECT oid FROM pg_database WHERE datname = current_database()").Scan(&oid); err != nil {
		t.Fatal(err)
	}
	return oid
}

// fill writes rows into several tables joined by foreign keys: a node
// with its GPUs (and their audit rows), a team.
func fill(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	gpus, err := models.NewNodeGPUs("node01", 2, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateNode(ctx, &models.Node{Name: "node01"}, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTeam(ctx, &models.Team{Name: "T"}, models.CLIActor); err != nil {
		t.Fatal(err)
	}
}

// rows counts the rows of every table but the migrations' own.
func rows(t *testing.T, db *store.DB) int {
	t.Helper()
	var names []string
	r, err := db.SQL.Query(`SELECT quote_ident(relname) FROM pg_class WHERE relnamespace = 'public'::regnamespace
		AND relkind IN ('r', 'p') AND NOT relispartition AND relname <> 'goose_db_version'`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var n string
		r.Scan(&n)
		names = append(names, n)
	}
	r.Close()
	total := 0
	for _, n := range names {
		var c int
		if err := db.SQL.QueryRow("SELECT count(*) FROM " + n).Scan(&c); err != nil {
			t.Fatal(err)
		}
		total += c
	}
	return total
}

// A test's PostgreSQL database goes, emptied, to the next test of the
// process, which finds it as a fresh copy would be: no rows, ids from 1,
// no session of the earlier test left on it. One whose schema a test
// changed is dropped instead.
func TestRecycledDatabaseIsLikeAFreshCopy(t *testing.T) {
	var first int64
	var leaked *sql.DB
	t.Run("writes", func(t *testing.T) {
		url := storetest.MigratedURL(t, store.Postgres)
		db := storetest.OpenURL(t, url)
		first = dbOID(t, db)
		fill(t, db)
		if rows(t, db) == 0 {
			t.Fatal("fill wrote nothing")
		}
		var err error
		if leaked, err = sql.Open("pgx", url); err != nil {
			t.Fatal(err)
		}
		if err := leaked.Ping(); err != nil { // a session the test never ends
			t.Fatal(err)
		}
	})
	t.Cleanup(func() { leaked.Close() })
	var second int64
	t.Run("reads", func(t *testing.T) {
		db := storetest.Open(t, store.Postgres)
		second = dbOID(t, db)
		if second != first {
			t.Fatalf("got database %d, not the recycled %d", second, first)
		}
		if n := rows(t, db); n != 0 {
			t.Fatalf("recycled database holds %d rows", n)
		}
		// While this test runs on it, the first test's session (ended by the
		// recycling) cannot come back and write here.
		if _, err := leaked.Exec("CREATE TABLE written_late (id int)"); err == nil {
			t.Fatal("the first test's session still writes into the recycled database")
		}
		fill(t, db)
		gpus, err := db.GPUs(t.Context())
		if err != nil || len(gpus) != 2 || gpus[0].ID != 1 {
			t.Fatalf("ids do not start at 1 again: %+v %v", gpus, err)
		}
		if _, err := db.SQL.Exec("CREATE TABLE left_behind (id int)"); err != nil {
			t.Fatal(err)
		}
	})
	if err := leaked.Ping(); err == nil {
		if _, err := leaked.Exec("CREATE TABLE written_late (id int)"); err == nil {
			t.Fatal("the first test's session still writes into the recycled database")
		}
	}
	t.Run("after a schema change", func(t *testing.T) {
		db := storetest.Open(t, store.Postgres)
		if oid := dbOID(t, db); oid == second {
			t.Fatalf("got %d again although a table was added to it", oid)
		}
		var n int
		if err := db.SQL.QueryRow("SELECT count(*) FROM pg_class WHERE relname IN ('left_behind', 'written_late')").Scan(&n); err != nil || n != 0 {
			t.Fatalf("tables of earlier tests: %d (%v)", n, err)
		}
	})
}

// A test's own handle (Open) lends the recycling a connection of its pool,
// whatever the test left in that session's settings: the database still
// goes, emptied, to the next test, whose ids start at 1.
func TestRecycledThroughTheTestsOwnHandle(t *testing.T) {
	var first int64
	t.Run("changes its sessions", func(t *testing.T) {
		db := storetest.Open(t, store.Postgres)
		first = dbOID(t, db)
		fill(t, db)
		db.SQL.SetMaxOpenConns(1) // the settings below stay on the one connection the recycling gets
		for _, set := range []string{"SET search_path TO pg_catalog", "SET statement_timeout TO 1", "SET default_transaction_read_only TO on"} {
			if _, err := db.SQL.Exec(set); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("finds it fresh", func(t *testing.T) {
		db := storetest.Open(t, store.Postgres)
		if oid := dbOID(t, db); oid != first {
			t.Fatalf("got database %d, not the recycled %d", oid, first)
		}
		if n := rows(t, db); n != 0 {
			t.Fatalf("recycled database holds %d rows", n)
		}
		fill(t, db)
		gpus, err := db.GPUs(t.Context())
		if err != nil || len(gpus) != 2 || gpus[0].ID != 1 {
			t.Fatalf("ids do not start at 1 again: %+v %v", gpus, err)
		}
	})
}
