// Package storetest opens real databases for tests: a fresh SQLite file and,
// when PostgreSQL is reachable, a fresh PostgreSQL database that is dropped
// afterwards. Under CI=true a missing PostgreSQL fails the test instead of
// skipping it, so that the PostgreSQL suite can never silently not run.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/gpubook/gpubook/models/store"
)

// AdminURL is the PostgreSQL server tests create their databases on;
// GPUBOOK_TEST_POSTGRES overrides it.
func AdminURL() string {
	if u := os.Getenv("GPUBOOK_TEST_POSTGRES"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// Dialects lists the databases every store test runs on.
var Dialects = []string{store.SQLite, store.Postgres}

// Each runs fn once per database, as subtests named "sqlite" and "postgres",
// each on a fresh, migrated database. The two run side by side (parallel
// subtests: they share nothing), so Each must be the last thing its test
// does: the subtests run after the calling function has returned.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, d := range Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			fn(t, Open(t, d))
		})
	}
}

// Open returns a fresh, migrated database of the dialect, closed (and for
// PostgreSQL dropped) when the test ends. A PostgreSQL one is a copy of a
// template migrated once (see migratedTemplate): migrating took 0.2 s of
// every test, the copy none; under Run a SQLite one is a copy of a file
// migrated once per process (see migratedSQLite). MigrateUp then finds
// nothing left to apply.
func Open(t testing.TB, dialect string) *store.DB {
	t.Helper()
	var db *store.DB
	if dialect == store.Postgres {
		url, name, recyclable := freshPostgres(t, true)
		t.Cleanup(func() { // registered first: a failed open still recycles or drops it
			switch {
			case recyclable:
				recycleOrDrop(t, name, db) // on a connection of db's own pool, then closes it
			case db != nil:
				db.Close()
			}
		})
		db = openURL(t, url)
	} else {
		db = OpenURL(t, freshSQLite(t))
	}
	if _, err := db.MigrateUp(context.Background()); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	return db
}

// MigratedURL is the URL of a fresh database of the dialect, migrated (or
// a copy of one migrated), as Open opens it: for a test that reaches it
// another way (through a proxy that watches the connection, say).
func MigratedURL(t testing.TB, dialect string) string {
	t.Helper()
	if dialect == store.Postgres {
		url, name, recyclable := freshPostgres(t, true)
		if recyclable {
			t.Cleanup(func() { recycleOrDrop(t, name, nil) })
		}
		return url
	}
	return freshSQLite(t)
}

// OpenEmpty is Open without the migrations.
func OpenEmpty(t testing.TB, dialect string) *store.DB {
	t.Helper()
	return OpenURL(t, URL(t, dialect))
}

// OpenURL opens the database at url (another handle on a database of URL,
// say, as a second replica would), closed when the test ends.
func OpenURL(t testing.TB, url string) *store.DB {
	t.Helper()
	db := openURL(t, url)
	t.Cleanup(func() { db.Close() })
	return db
}

// openURL is OpenURL without the close at the test's end.
func openURL(t testing.TB, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	db.SetMaxConns(testMaxConns)
	return db
}

// testMaxConns caps each test handle's PostgreSQL pool: tests run side by
// side (Run), packages too, and the server's max_connections (100 by
// default) is shared by them all; eight concurrent transactions still race.
const testMaxConns = 8

// URL returns a GPUBOOK_DATABASE_URL for a fresh database of the dialect.
func URL(t testing.TB, dialect string) string {
	t.Helper()
	if dialect == store.SQLite {
		return "sqlite:" + filepath.Join(t.TempDir(), "gpubook.db")
	}
	url, _, _ := freshPostgres(t, false)
	return url
}

// freshPostgres creates a scratch database, empty or (migrated) a copy of
// the migrated template (or, under Run, an emptied one of an earlier
// test), and returns its URL and name. A recyclable one (migrated, under
// Run) is the caller's to hand to recycleOrDrop when the test ends; any
// other is dropped when the test ends.
func freshPostgres(t testing.TB, migrated bool) (url, name string, recyclable bool) {
	t.Helper()
	ctx := context.Background()
	if migrated {
		if name, ok := takeRecycled(); ok {
			return replaceDBName(AdminURL(), name), name, true
		}
	}
	template := ""
	var err error
	if migrated {
		template, err = migratedTemplate(ctx)
	}
	if err == nil {
		name, err = scratchPostgres(ctx, AdminURL(), "gpubook_test", template, true)
		if template != "" && isMissingDatabase(err) {
			// Another checkout's run under CI=true dropped the template
			// (dropOtherTemplates): build it again, once, and copy that.
			if template, err = rebuildTemplate(ctx, template); err == nil {
				name, err = scratchPostgres(ctx, AdminURL(), "gpubook_test", template, true)
			}
		}
	}
	if errors.Is(err, ErrNoPostgres) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is required under CI=true but not reachable at %s: %v", AdminURL(), err)
		}
		t.Skipf("%v; set CI=true to make this a failure", err)
	}
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	url = replaceDBName(AdminURL(), name)
	if migrated && runActive() {
		if err := learnFresh(ctx, url); err != nil {
			t.Log(err) // nothing is recycled then; every database is dropped
		}
		return url, name, true
	}
	t.Cleanup(func() { dropNowOrLater(t, dropper(AdminURL(), name)) })
	return url, name, false
}

// recycleOrDrop puts the migrated database name back in Run's pool (see
// recycle) or, when it cannot be, drops it. With the test's own handle
// db (nil when the test opened its own), the check and the emptying run
// on a connection of db's pool, which recycleOrDrop then closes.
func recycleOrDrop(t testing.TB, name string, db *store.DB) {
	if err := recycle(name, db); err != nil {
		if !errors.Is(err, errNotRecyclable) {
			t.Logf("storetest: %s not recycled: %v", name, err)
		}
		dropNowOrLater(t, dropper(AdminURL(), name))
	}
}

// dropNowOrLater hands drop to Run's droppers, or outside Run drops the
// database at once.
func dropNowOrLater(t testing.TB, drop func() error) {
	if dropLater(drop) {
		return
	}
	if err := drop(); err != nil {
		t.Log(err)
	}
}

// ErrNoPostgres is ScratchPostgres's answer when the server does not answer.
var ErrNoPostgres = errors.New("PostgreSQL not reachable")

// ScratchPostgres creates a database named prefix_<random> (prefix: a
// constant of lower-case letters and underscores) on the server
// at adminURL and returns its URL and drop, which removes it (on a
// connection of its own). Tests and the load scripts under scripts/ use it.
func ScratchPostgres(ctx context.Context, adminURL, prefix string) (url string, drop func() error, err error) {
	name, err := scratchPostgres(ctx, adminURL, prefix, "", false)
	if err != nil {
		return "", nil, err
	}
	return replaceDBName(adminURL, name), dropper(adminURL, name), nil
}

// scratchPostgres creates the database for ScratchPostgres and returns its
// name, as a copy of template unless "".
// With lazyCommit a commit does not wait for the WAL to reach the disk
// (synchronous_commit off, for this database only): what a committed
// transaction wrote is the same for every reader, only a crash of the
// PostgreSQL server could lose it, and tests do not crash the server. The
// load scripts, whose figures must be a real deployment's, keep it on.
func scratchPostgres(ctx context.Context, adminURL, prefix, template string, lazyCommit bool) (string, error) {
	admin, err := sql.Open("pgx", adminURL)
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := admin.PingContext(pingCtx); err != nil {
		admin.Close()
		return "", fmt.Errorf("%w (%v)", ErrNoPostgres, err)
	}
	name := randomName(prefix)
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if _, err := admin.ExecContext(ctx, create); err != nil {
		admin.Close()
		return "", fmt.Errorf("create database: %w", err)
	}
	if lazyCommit {
		if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" SET synchronous_commit TO off"); err != nil {
			admin.Exec("DROP DATABASE IF EXISTS " + name)
			admin.Close()
			return "", fmt.Errorf("create database: %w", err)
		}
	}
	admin.Close() // drop connects again: a test holds no admin connection, nor a drop waiting in Run's queue
	return name, nil
}

// dropper drops the database name on the server at adminURL, on a
// connection of its own.
func dropper(adminURL, name string) func() error {
	return func() error {
		admin, err := sql.Open("pgx", adminURL)
		if err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
}

// randomName is prefix_<12 hex digits>.
func randomName(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// replaceDBName swaps the database in a postgres:// URL.
func replaceDBName(url, name string) string {
	rest := url
	query := ""
	if i := strings.IndexByte(url, '?'); i >= 0 {
		rest, query = url[:i], url[i:]
	}
	if i := strings.LastIndexByte(rest, '/'); i > len("postgres://") {
		rest = rest[:i]
	}
	return rest + "/" + name + query
}
