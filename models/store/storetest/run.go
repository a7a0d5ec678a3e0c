package storetest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gpubook/gpubook/models/store"
)

// DefaultParallel is how many tests of a package Run lets run at once
// unless -parallel says otherwise (go test's default is the number of
// cores). The store tests mostly wait on PostgreSQL (a CREATE DATABASE, a
// DROP DATABASE with its checkpoint, commits), not on the CPU.
const DefaultParallel = 4

// droppers is how many PostgreSQL test databases Run drops at once. Each
// DROP DATABASE waits for a checkpoint of its own unless it shares one with
// the drops that wait beside it: two at a time left 57 s of drops queued
// when the store tests had ended (27 s), twelve 2 s.
const droppers = 12

// run is the state of Run; a package whose TestMain does not call Run
// drops each database when its test ends and migrates each SQLite file.
var run struct {
	mu     sync.Mutex
	active bool
	drops  chan func() error
	wg     sync.WaitGroup
	dir    string // migratedSQLite's folder, removed at the end

	recycle recycler // emptied PostgreSQL databases for later tests

	sqliteOnce sync.Once
	sqlitePath string
	sqliteErr  error
}

// Run is a TestMain for packages that test on storetest's databases:
//
//	func TestMain(m *testing.M) { storetest.Run(m) }
//
// It sets -parallel to DefaultParallel unless given, drops the PostgreSQL
// databases of finished tests in the background (a drop took 0.3–1 s of
// each test's time) and waits for those drops before it exits, and makes
// each fresh SQLite database a copy of one migrated once (see Open).
func Run(m *testing.M) {
	os.Exit(Main(m, DefaultParallel))
}

// Main is Run for a TestMain with more to do: it runs the tests with
// -parallel defaulting to parallel and returns the exit code.
func Main(m *testing.M, parallel int) int {
	return run1(m, fmt.Sprint(parallel))
}

func run1(m *testing.M, parallel string) int {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", parallel)
	}
	run.mu.Lock()
	run.active = true
	run.drops = make(chan func() error, 1024)
	for range droppers {
		run.wg.Add(1)
		go func() {
			defer run.wg.Done()
			for drop := range run.drops {
				if err := drop(); err != nil {
					fmt.Fprintln(os.Stderr, "storetest:", err)
				}
			}
		}()
	}
	run.mu.Unlock()
	code := m.Run()
	for _, drop := range endRecycling() {
		run.drops <- drop
	}
	run.mu.Lock()
	run.active = false
	close(run.drops)
	run.mu.Unlock()
	run.wg.Wait()
	if run.dir != "" {
		os.RemoveAll(run.dir)
	}
	return code
}

// runActive: the tests run under Run.
func runActive() bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.active
}

// dropLater hands drop to Run's droppers; false outside Run (the caller
// drops it then).
func dropLater(drop func() error) bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	if !run.active {
		return false
	}
	run.drops <- drop // buffered; a full buffer waits for a dropper
	return true
}

// freshSQLite returns the URL of a fresh SQLite file for t: under Run a
// copy of migratedSQLite, else an empty one.
func freshSQLite(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gpubook.db")
	if !runActive() {
		return "sqlite:" + path
	}
	tmpl, err := migratedSQLite()
	if err != nil {
		t.Fatalf("sqlite template: %v", err)
	}
	b, err := os.ReadFile(tmpl)
	if err == nil {
		err = os.WriteFile(path, b, 0o600)
	}
	if err != nil {
		t.Fatalf("sqlite template: %v", err)
	}
	return "sqlite:" + path
}

// migratedSQLite is a SQLite file migrated to the current schema, made
// once per test process (migrating cost each test about as much as the
// rest of a short test), as one file without a WAL beside it (VACUUM INTO).
func migratedSQLite() (string, error) {
	run.sqliteOnce.Do(func() {
		run.sqlitePath, run.sqliteErr = buildSQLite()
	})
	return run.sqlitePath, run.sqliteErr
}

func buildSQLite() (string, error) {
	dir, err := os.MkdirTemp("", "gpubook-storetest-")
	if err != nil {
		return "", err
	}
	run.mu.Lock()
	run.dir = dir
	run.mu.Unlock()
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "migrating.db"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.MigrateUp(ctx); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "migrated.db")
	if _, err := db.SQL.ExecContext(ctx, "VACUUM INTO '"+strings.ReplaceAll(path, "'", "''")+"'"); err != nil {
		return "", fmt.Errorf("vacuum into: %w", err)
	}
	return path, nil
}
