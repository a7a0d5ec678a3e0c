package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpubook/gpubook/agent/atomicfile"
	"github.com/gpubook/gpubook/models/store"
)

// Kinds of backup file restore accepts.
const (
	backupSQLite   = "sqlite"
	backupPGCustom = "pg_dump archive"
	backupPGText   = "pg_dump SQL script"
)

// restore runs "gpubook restore FILE": a backup into an empty database,
// then the pending migrations (a backup of an older gpubook comes up to
// date). A database that holds any table is refused and left untouched.
func (c *cli) restore(ctx context.Context, args []string) error {
	f := newFlags("restore", "gpubook restore FILE [--database-url URL]",
		"Restores a backup made by 'gpubook backup' (or pg_dump) into an EMPTY database, then applies\n"+
			"pending migrations. SQLite: FILE is copied to the sqlite: path, which must not exist or hold no table.\n"+
			"PostgreSQL: the database must exist (createdb) and hold no table; pg_restore (or psql for a SQL\n"+
			"script) must be on PATH. A database that is not empty is refused and left as it is.", false)
	cfg, pos, err := f.parse(c, args, 1, 1)
	if err != nil {
		return err
	}
	file := pos[0]
	kind, err := backupKindOf(file)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if (kind == backupSQLite) != (cfg.Dialect == store.SQLite) {
		return fmt.Errorf("restore: %s is a %s backup, but the database URL is %s; restore it into a %s database",
			file, kind, cfg.Dialect, map[bool]string{true: "sqlite:", false: "PostgreSQL"}[kind == backupSQLite])
	}
	if kind == backupSQLite {
		err = restoreSQLite(ctx, cfg.DatabaseURL, file)
	} else {
		err = restorePostgres(ctx, cfg.DatabaseURL, file, kind)
	}
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer db.Close()
	pending, err := db.Pending(ctx)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := migrateUp(ctx, db, c.logger(cfg)); err != nil {
		return fmt.Errorf("restore: restored, but migrating failed: %w", err)
	}
	// pg_restore leaves the tables without planner statistics, and until
	// autovacuum gathers them the usage page's plans over the hourly sums
	// are several times slower (docs/performance.md, the usage page on the
	// quiet machine).
	if cfg.Dialect == store.Postgres {
		if _, err := db.SQL.ExecContext(ctx, "ANALYZE"); err != nil {
			return fmt.Errorf("restore: restored and migrated, but ANALYZE failed: %w", err)
		}
	}
	fmt.Fprintf(c.stdout, "restored %s into %s; applied %d migration(s) after it\n", file, store.RedactURL(cfg.DatabaseURL), pending)
	return nil
}

// backupKindOf tells a SQLite file from a pg_dump archive or script by its
// first bytes.
func backupKindOf(file string) (string, error) {
	fh, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(fh, head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return backupSQLite, nil
	case bytes.HasPrefix(head, []byte("PGDMP")):
		return backupPGCustom, nil
	case bytes.Contains(head, []byte("PostgreSQL database dump")):
		return backupPGText, nil
	}
	return "", fmt.Errorf("%s is neither a SQLite database nor a pg_dump archive or script", file)
}

// notEmpty is the refusal of a database that already holds tables.
func notEmpty(dbURL string, tables []string, hint string) error {
	shown := tables
	if len(shown) > 3 {
		shown = append(shown[:3:3], "…")
	}
	return fmt.Errorf("restore: the database %s is not empty (%d tables: %s); nothing was changed. Restore only into an empty database: %s",
		store.RedactURL(dbURL), len(tables), strings.Join(shown, ", "), hint)
}

// restoreSQLite checks the backup and copies it to the database's path
// (through a temporary file and a rename, so that the path never holds
// half a database).
func restoreSQLite(ctx context.Context, dbURL, file string) error {
	path, err := store.SQLitePath(dbURL)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if same(path, file) {
		return fmt.Errorf("restore: %s is the backup itself; choose another path for the database", path)
	}
	tables, err := store.CheckSQLiteFile(ctx, file)
	if err != nil {
		return fmt.Errorf("restore: %s: %w", file, err)
	}
	if !slices.Contains(tables, "goose_db_version") {
		return fmt.Errorf("restore: %s is a SQLite database but not a gpubook backup (it has no goose_db_version table)", file)
	}
	if _, err := os.Stat(path); err == nil {
		existing, err := store.CheckSQLiteFile(ctx, path)
		if err != nil {
			return fmt.Errorf("restore: %s exists and is not an empty SQLite database (%v); nothing was changed", path, err)
		}
		if len(existing) > 0 {
			return notEmpty(dbURL, existing, "choose a new file with --database-url sqlite:PATH")
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Remove(p); err != nil && !isNotExist(err) {
				return fmt.Errorf("restore: %w", err)
			}
		}
	}
	return copyFile(file, path)
}

// copyFile copies src to dst through dst's folder: the copy is synced
// before the rename and the folder after it, so that a crash leaves either
// the old file or the whole new one.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".restore-*")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return fmt.Errorf("restore: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("restore: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// The rename is durable only once the folder that holds it is synced.
	if err := atomicfile.SyncDir(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// same reports whether two paths name one file.
func same(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// restorePostgres refuses a database with tables, checks that the dump is
// gpubook's, and restores it in one transaction: a failure leaves the
// database empty.
func restorePostgres(ctx context.Context, dbURL, file, kind string) error {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	tables, err := db.Tables(ctx)
	db.Close()
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if len(tables) > 0 {
		return notEmpty(dbURL, tables, "createdb a new one and point --database-url at it")
	}
	conn, env := pgConn(dbURL)
	tool, args := "pg_restore", []string{"--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", "--dbname=" + conn, file}
	if kind == backupPGText {
		tool, args = "psql", []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "--dbname=" + conn, "--file=" + file}
	}
	bin, err := exec.LookPath(tool)
	if err != nil {
		return fmt.Errorf("restore: %s is not on PATH; install the PostgreSQL client", tool)
	}
	if err := checkPGDump(ctx, file, kind); err != nil {
		return err
	}
	return runPGTool(ctx, "restore", bin, args, env)
}

// checkPGDump refuses a dump without gpubook's goose_db_version table
// before anything is written.
func checkPGDump(ctx context.Context, file, kind string) error {
	var r io.Reader
	if kind == backupPGCustom {
		out, err := exec.CommandContext(ctx, "pg_restore", "--list", file).Output()
		if err != nil {
			return fmt.Errorf("restore: pg_restore cannot read %s: %w", file, err)
		}
		r = bytes.NewReader(out)
	} else {
		fh, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		defer fh.Close()
		r = fh
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "TABLE") && strings.Contains(sc.Text(), "goose_db_version") {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("restore: reading %s: %w", file, err)
	}
	return fmt.Errorf("restore: %s is a %s but not of a gpubook database (no goose_db_version table)", file, kind)
}
