package storetest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gpubook/gpubook/migrations"
	"github.com/gpubook/gpubook/models/store"
)

// templatePrefix names the migrated template databases on the test server.
const templatePrefix = "gpubook_tmpl_"

var (
	templateMu    sync.Mutex
	templateBuilt bool
	templateName  string
	templateErr   error
)

// migratedTemplate returns the name of a PostgreSQL database migrated to
// the current schema, made once per schema for every test process: its name
// holds a hash of the migration files, so a changed migration makes a new
// one. Processes running in parallel (go test runs packages so) build it
// under an advisory lock, under a scratch name renamed when complete, so
// none ever copies a half-migrated template.
func migratedTemplate(ctx context.Context) (string, error) {
	templateMu.Lock()
	defer templateMu.Unlock()
	if !templateBuilt {
		templateName, templateErr = buildTemplate(ctx)
		templateBuilt = true
	}
	return templateName, templateErr
}

// rebuildTemplate builds the template again when a copy of gone (its name)
// found it missing: a run of another checkout under CI=true drops the
// templates of other schemas. Tests that find it missing at once rebuild it
// once: the first builds, the others find it there.
func rebuildTemplate(ctx context.Context, gone string) (string, error) {
	templateMu.Lock()
	if templateBuilt && templateErr == nil && templateName == gone {
		templateBuilt = false
	}
	templateMu.Unlock()
	return migratedTemplate(ctx)
}

// isMissingDatabase: err is PostgreSQL's "database does not exist".
func isMissingDatabase(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "3D000"
}

func buildTemplate(ctx context.Context) (string, error) {
	sum, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := templatePrefix + sum
	admin, err := sql.Open("pgx", AdminURL())
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	defer admin.Close()
	connCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := admin.Conn(connCtx) // the advisory lock belongs to one session
	if err != nil {
		return "", fmt.Errorf("%w (%v)", ErrNoPostgres, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext('gpubook test template'))"); err != nil {
		return "", fmt.Errorf("template lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext('gpubook test template'))")
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("template lookup: %w", err)
	}
	if exists {
		return name, nil
	}
	if os.Getenv("CI") == "true" { // one checkout at a time; elsewhere another may use them
		dropOtherTemplates(ctx, conn, name)
	}
	building := name + "_building"
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+building); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	db, err := store.Open(ctx, replaceDBName(AdminURL(), building))
	if err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	_, err = db.MigrateUp(ctx)
	db.Close()
	if err != nil {
		return "", fmt.Errorf("template: migrate: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+building+" RENAME TO "+name); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	return name, nil
}

// dropOtherTemplates removes templates of other schemas (earlier runs);
// one still being copied stays (the drop fails) and goes the next time.
func dropOtherTemplates(ctx context.Context, conn *sql.Conn, keep string) {
	rows, err := conn.QueryContext(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2",
		templatePrefix+"%", keep)
	if err != nil {
		return
	}
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			names = append(names, n)
		}
	}
	rows.Close()
	for _, n := range names {
		conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+n)
	}
}

// migrationsHash is a short hash of every PostgreSQL migration file.
func migrationsHash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.Postgres, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.Postgres, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("template: hash migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}
