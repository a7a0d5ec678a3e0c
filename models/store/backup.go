package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
)

// SQLitePath is the file a sqlite: URL names.
func SQLitePath(url string) (string, error) {
	dialect, _, err := ParseURL(url)
	if err != nil {
		return "", err
	}
	if dialect != SQLite {
		return "", fmt.Errorf("not a sqlite: URL")
	}
	return sqliteFile(url), nil
}

// RedactURL hides a database URL's password, for messages.
func RedactURL(url string) string { return redact(url) }

// BackupSQLite writes a consistent copy of the open SQLite database to
// path with VACUUM INTO: one read transaction, so that writers (the
// running server, in WAL mode) go on meanwhile and the copy is the
// database as of one commit. path must not exist.
func (db *DB) BackupSQLite(ctx context.Context, path string) error {
	if db.Dialect != SQLite {
		return fmt.Errorf("store: backup: VACUUM INTO is for SQLite; use pg_dump for PostgreSQL")
	}
	if _, err := db.SQL.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}

// Tables lists the database's tables (goose's version table included), so
// that a restore can refuse a database that is not empty.
func (db *DB) Tables(ctx context.Context) ([]string, error) {
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`
	if db.Dialect == Postgres {
		q = `SELECT table_schema || '.' || table_name FROM information_schema.tables
			WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE' ORDER BY 1`
	}
	rows, err := db.SQL.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("store: list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("store: list tables: %w", err)
		}
		out = append(out, strings.TrimPrefix(n, "public."))
	}
	return out, rows.Err()
}

// CheckSQLiteFile opens the SQLite file at path read-only and runs SQLite's
// integrity check, so that a restore never installs a damaged or foreign
// file; it returns the file's tables.
func CheckSQLiteFile(ctx context.Context, path string) ([]string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	sqlDB, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return nil, err
	}
	defer sqlDB.Close()
	var res string
	if err := sqlDB.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return nil, fmt.Errorf("not a readable SQLite database: %w", err)
	}
	if res != "ok" {
		return nil, fmt.Errorf("SQLite's integrity check fails: %s", res)
	}
	d := &DB{SQL: sqlDB, Dialect: SQLite}
	return d.Tables(ctx)
}
