// Package store implements the models' store interfaces on GORM, for
// PostgreSQL (production) and SQLite (the embedded default). Both share one
// *sql.DB with goose, which owns the schema; GORM never migrates.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/libtnb/sqlite"
	"github.com/pressly/goose/v3"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	_ "modernc.org/sqlite" // registers the "sqlite" driver, the only one that does

	"github.com/gpubook/gpubook/migrations"
)

// Dialects gpubook runs on.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// DB is an open database with its dialect. It implements every store
// interface of the models package.
type DB struct {
	SQL     *sql.DB
	Gorm    *gorm.DB
	Dialect string
	// Clock, when set, replaces the database's clock for leases and claims
	// (tests step time with it); nil in production.
	Clock func() time.Time
	// live shares a week in progress among concurrent page views
	// (report_live.go); nil shares nothing.
	live *liveWeeks
	// trends keeps frozen trend weeks decoded (report_trend_cache.go);
	// nil keeps none.
	trends *trendCache
	// inventory keeps the last read of every node and GPU while its stamp
	// holds (inventory.go); nil keeps none.
	inventory *inventory
	// rolled keeps the rolled part of the weeks read last (report_rolled.go).
	rolled *rolledWeeks
}

// sqliteParams configures every SQLite connection: foreign keys on, WAL,
// SQLite's busy handler for other processes' locks, every transaction BEGIN
// IMMEDIATE (the check and the insert of a booking then hold the write lock
// together, which the no-double-booking rule depends on), and times written
// as "2006-01-02 15:04:05.999999999-07:00" — the text the earlier driver
// (glebarez/go-sqlite) wrote, so that existing databases and new rows
// compare as text in the same order (modernc.org/sqlite's own default is
// time.Time.String, which would not).
const sqliteParams = "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate&_time_format=sqlite"

// ParseURL splits a GPUBOOK_DATABASE_URL into a dialect and a driver DSN.
// Accepted: postgres://…, postgresql://… and sqlite:PATH (sqlite::memory: is
// refused because each connection would see its own empty database).
func ParseURL(url string) (dialect, dsn string, err error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return Postgres, url, nil
	case strings.HasPrefix(url, "sqlite:"):
		path := sqliteFile(url)
		if path == "" || path == ":memory:" {
			return "", "", fmt.Errorf("sqlite URL needs a file path, e.g. sqlite:./gpubook.db")
		}
		return SQLite, "file:" + path + sqliteParams, nil
	default:
		return "", "", fmt.Errorf("must start with postgres://, postgresql:// or sqlite: (got %q)", redact(url))
	}
}

// sqliteFile is the file path of a sqlite: URL (sqlite:PATH or
// sqlite://PATH, parameters after ? dropped).
func sqliteFile(url string) string {
	path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
	path, _, _ = strings.Cut(path, "?")
	return path
}

// redact hides a password in a URL, in the user part or as a password=
// parameter, so that it never reaches a log or an error.
func redact(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return "(a database URL that does not parse)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Open connects to the database named by url and checks that it answers.
func Open(ctx context.Context, url string) (*DB, error) {
	dialect, dsn, err := ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if dialect == SQLite {
		if err := createPrivate(sqliteFile(url)); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	if dialect == Postgres {
		dsn = withApplicationName(dsn, ApplicationName())
	}
	driver := map[string]string{Postgres: "pgx", SQLite: "sqlite"}[dialect]
	sqlDB, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dialect, err)
	}
	configurePool(sqlDB, dialect)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		sqlDB.Close()
		if dialect == SQLite {
			err = explainSQLiteOpen(dsn, err)
		}
		return nil, fmt.Errorf("store: connect to %s: %w", redact(url), err)
	}
	var dialector gorm.Dialector
	if dialect == Postgres {
		dialector = postgres.New(postgres.Config{Conn: sqlDB})
	} else {
		dialector = sqlite.New(sqlite.Config{Conn: newWriterPool(sqlDB)})
	}
	g, err := gorm.Open(dialector, &gorm.Config{
		SkipDefaultTransaction: true,
		Logger:                 logger.Discard,
		NowFunc:                func() time.Time { return time.Now().UTC().Truncate(time.Second) },
	})
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("store: gorm: %w", err)
	}
	return &DB{SQL: sqlDB, Gorm: g, Dialect: dialect, live: newLiveWeeks(), trends: &trendCache{}, inventory: &inventory{}, rolled: &rolledWeeks{}}, nil
}

// ApplicationName is what every PostgreSQL connection of this process
// calls itself, gpubook/<host>/<pid>, so that pg_stat_activity, the
// server's log (%a) and pg_locks tell the replicas apart.
func ApplicationName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("gpubook/%s/%d", host, os.Getpid())
}

// withApplicationName adds application_name to a postgres:// URL, which
// pgx sends in every connection's startup message. A name the URL already
// gives is kept: the admin chose it.
func withApplicationName(dsn, name string) string {
	u, err := neturl.Parse(dsn)
	if err != nil {
		return dsn // pgx reports the bad URL
	}
	q := u.Query()
	if q.Has("application_name") {
		return dsn
	}
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// createPrivate creates a missing SQLite file empty and 0600, whatever the
// umask: SQLite would create it 0644 less the umask, and its -wal and -shm
// files take the database file's mode. An empty file is an empty database.
// An existing file is left as it is; a missing folder or any other failure
// is left for SQLite's open to report (explainSQLiteOpen).
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil // it exists, or SQLite's own open says what is wrong
	}
	if err := f.Chmod(0o600); err != nil { // past a umask that takes the owner's bits too
		f.Close()
		return err
	}
	return f.Close()
}

// explainSQLiteOpen says what SQLite's "unable to open database file: out
// of memory (14)" means when the file's folder is missing or not a folder.
func explainSQLiteOpen(dsn string, err error) error {
	path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	dir := filepath.Dir(path)
	if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
		return fmt.Errorf("the folder %s for the SQLite file does not exist (create it or choose another path): %w", dir, err)
	}
	return err
}

func configurePool(db *sql.DB, dialect string) {
	if dialect == SQLite {
		// One writer at a time anyway; a few connections serve concurrent readers.
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
		return
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
}

// Close closes the underlying connections (on SQLite the writer's first).
func (db *DB) Close() error {
	if w, ok := db.Gorm.Config.ConnPool.(*writerPool); ok {
		w.close()
	}
	return db.SQL.Close()
}

// Ping reports whether the database answers; /readyz uses it.
func (db *DB) Ping(ctx context.Context) error { return db.SQL.PingContext(ctx) }

func (db *DB) provider() (*goose.Provider, error) {
	var fsys fs.FS
	var err error
	var d goose.Dialect
	if db.Dialect == Postgres {
		fsys, err = fs.Sub(migrations.Postgres, "postgres")
		d = goose.DialectPostgres
	} else {
		fsys, err = fs.Sub(migrations.SQLite, "sqlite")
		d = goose.DialectSQLite3
	}
	if err != nil {
		return nil, err
	}
	opts, err := migrationLock(db.Dialect)
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(d, db.SQL, fsys, opts...)
}

// MigrateUp applies every pending migration and reports each applied version.
func (db *DB) MigrateUp(ctx context.Context) ([]int64, error) {
	p, err := db.provider()
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrate up: %w", err)
	}
	versions := make([]int64, 0, len(res))
	for _, r := range res {
		versions = append(versions, r.Source.Version)
	}
	return versions, nil
}

// MigrateDownOne rolls back the newest applied migration.
func (db *DB) MigrateDownOne(ctx context.Context) (int64, error) {
	p, err := db.provider()
	if err != nil {
		return 0, fmt.Errorf("store: migrations: %w", err)
	}
	res, err := p.Down(ctx)
	if err != nil {
		if errors.Is(err, goose.ErrNoNextVersion) {
			return 0, fmt.Errorf("store: migrate down: nothing to roll back")
		}
		return 0, fmt.Errorf("store: migrate down: %w", err)
	}
	return res.Source.Version, nil
}

// MigrationState is one migration and whether it is applied.
type MigrationState struct {
	Version   int64
	File      string
	Applied   bool
	AppliedAt time.Time
}

// MigrationStatus lists every known migration and its state.
func (db *DB) MigrationStatus(ctx context.Context) ([]MigrationState, error) {
	p, err := db.provider()
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migration status: %w", err)
	}
	out := make([]MigrationState, 0, len(st))
	for _, s := range st {
		out = append(out, MigrationState{Version: s.Source.Version, File: s.Source.Path, Applied: s.State == goose.StateApplied, AppliedAt: s.AppliedAt})
	}
	return out, nil
}

// Pending reports how many migrations are not applied yet.
func (db *DB) Pending(ctx context.Context) (int, error) {
	st, err := db.MigrationStatus(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range st {
		if !s.Applied {
			n++
		}
	}
	return n, nil
}
