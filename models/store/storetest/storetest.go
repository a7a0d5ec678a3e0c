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
// each on a fresh, migrated database.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, d := range Dialects {
		t.Run(d, func(t *testing.T) {
			fn(t, Open(t, d))
		})
	}
}

// Open returns a fresh, migrated database of the dialect, closed (and for
// PostgreSQL dropped) when the test ends.
func Open(t testing.TB, dialect string) *store.DB {
	t.Helper()
	db := OpenEmpty(t, dialect)
	if _, err := db.MigrateUp(context.Background()); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	return db
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
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// URL returns a GPUBOOK_DATABASE_URL for a fresh database of the dialect.
func URL(t testing.TB, dialect string) string {
	t.Helper()
	if dialect == store.SQLite {
		return "sqlite:" + filepath.Join(t.TempDir(), "gpubook.db")
	}
	return freshPostgres(t)
}

func freshPostgres(t testing.TB) string {
	t.Helper()
	url, drop, err := ScratchPostgres(context.Background(), AdminURL(), "gpubook_test")
	if errors.Is(err, ErrNoPostgres) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is required under CI=true but not reachable at %s: %v", AdminURL(), err)
		}
		t.Skipf("%v; set CI=true to make this a failure", err)
	}
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Log(err)
		}
	})
	return url
}

// ErrNoPostgres is ScratchPostgres's answer when the server does not answer.
var ErrNoPostgres = errors.New("PostgreSQL not reachable")

// ScratchPostgres creates a database named prefix_<random> (prefix: a
// constant of lower-case letters and underscores) on the server
// at adminURL and returns its URL and drop, which removes it (and closes
// the admin connection). Tests and the load scripts under scripts/ use it.
func ScratchPostgres(ctx context.Context, adminURL, prefix string) (url string, drop func() error, err error) {
	admin, err := sql.Open("pgx", adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("postgres: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := admin.PingContext(pingCtx); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("%w (%v)", ErrNoPostgres, err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := prefix + "_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop = func() error {
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
	return replaceDBName(adminURL, name), drop, nil
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
