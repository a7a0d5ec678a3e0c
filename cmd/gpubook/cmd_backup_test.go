package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// snapshot is every table's rows as text, sorted: two databases of one
// dialect hold the same data when their snapshots are equal.
func snapshot(t *testing.T, url string) map[string][]string {
	t.Helper()
	db := storetest.OpenURL(t, url)
	tables, err := db.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, tb := range tables {
		rows, err := db.SQL.QueryContext(ctx, "SELECT * FROM "+tb)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out[tb] = append(out[tb], fmt.Sprintf("%v", vals))
		}
		rows.Close()
		slices.Sort(out[tb])
	}
	db.Close()
	return out
}

// fill puts a node, users and bookings into the database at url.
func fill(t *testing.T, url string) {
	t.Helper()
	mustGpubook(t, url, "user", "add", "--email", "ada@example.org", "--name", "Ada", "--admin")
	mustGpubook(t, url, "node", "add", "--name", "gpu01", "--gpus", "2", "--model", "NVIDIA A100-SXM4-80GB", "--memory-mib", "81920")
	mustGpubook(t, url, "token", "create", "--email", "ada@example.org")
	mustGpubook(t, url, "demo", "--force", "--usage-days", "0")
}

// TestBackupRestoreSQLite: a backup taken while another connection writes
// is a consistent database (every user with the audit event written in
// its transaction, SQLite's integrity and foreign-key checks clean), which
// restores into a fresh path with exactly the backup's rows; a quiet
// backup restores to exactly the source's data.
func TestBackupRestoreSQLite(t *testing.T) {
	t.Parallel()
	src := storetest.URL(t, store.SQLite)
	fill(t, src)
	dir := t.TempDir()
	writer := storetest.OpenURL(t, src)
	var stop atomic.Bool
	var wrote atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			u := &models.User{Email: fmt.Sprintf("w%d@example.org", i), Name: "Writer"}
			if err := writer.CreateUser(context.Background(), u, models.CLIActor); err != nil {
				t.Errorf("write during backup: %v", err)
				return
			}
			wrote.Add(1)
		}
	})
	waitFor(func() bool { return wrote.Load() >= 20 }) // the writer is well under way
	online := filepath.Join(dir, "online.db")
	out := mustGpubook(t, src, "backup", online)
	duringBackup := wrote.Load()
	waitFor(func() bool { return wrote.Load() >= duringBackup+20 }) // and went on after it
	stop.Store(true)
	wg.Wait()
	if !strings.Contains(out, "backed up sqlite:") || !strings.Contains(out, online) {
		t.Errorf("backup said %q", out)
	}

	restored := "sqlite:" + filepath.Join(dir, "restored", "gpubook.db")
	os.Mkdir(filepath.Join(dir, "restored"), 0o700)
	out = mustGpubook(t, restored, "restore", online)
	if !strings.Contains(out, "restored "+online) || !strings.Contains(out, "applied 0 migration(s)") {
		t.Errorf("restore said %q", out)
	}
	got, source := snapshot(t, restored), snapshot(t, src)
	writers := 0
	for _, r := range got["users"] {
		if strings.Contains(r, "Writer") {
			writers++
		}
	}
	if writers == 0 || int64(writers) >= wrote.Load() {
		t.Errorf("the online backup has %d of the writer's %d users; want some, not all", writers, wrote.Load())
	}
	creates := 0
	for _, r := range got["audit_events"] {
		if strings.Contains(r, models.AuditUserCreate) && strings.Contains(r, "@example.org") {
			creates++
		}
	}
	if creates != len(got["users"]) {
		t.Errorf("%d users but %d user.create audit events: the backup is not one commit's state", len(got["users"]), creates)
	}
	for table, rows := range got {
		for _, r := range rows {
			if !slices.Contains(source[table], r) {
				t.Errorf("%s: restored row %s is not in the source", table, r)
			}
		}
	}
	db := storetest.OpenURL(t, restored)
	if n, err := db.SQL.QueryContext(ctx, "PRAGMA foreign_key_check"); err != nil || n.Next() {
		t.Errorf("foreign key check: %v", err)
	}

	// A quiet backup restores to the same data, row for row.
	quiet := filepath.Join(dir, "quiet.db")
	mustGpubook(t, src, "backup", quiet)
	again := "sqlite:" + filepath.Join(dir, "again.db")
	mustGpubook(t, again, "restore", quiet)
	if a, b := snapshot(t, again), snapshot(t, src); !equalSnapshots(a, b) {
		t.Errorf("restore of a quiet backup differs from the source")
	}
}

// waitFor polls cond until it holds.
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(5 * time.Millisecond)
	}
}

func equalSnapshots(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestBackupRestoreRefusals: each refusal is one line, and nothing is written.
func TestBackupRestoreRefusals(t *testing.T) {
	t.Parallel()
	src := storetest.URL(t, store.SQLite)
	fill(t, src)
	dir := t.TempDir()
	backup := filepath.Join(dir, "b.db")
	mustGpubook(t, src, "backup", backup)
	before := snapshot(t, src)
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("not a backup\n"), 0o600)
	plainSQLite := filepath.Join(dir, "other.db")
	other := storetest.OpenURL(t, "sqlite:"+plainSQLite)
	other.SQL.Exec("CREATE TABLE x (a INTEGER)")
	other.Close()
	tests := []struct {
		name, url string
		args      []string
		want      string
	}{
		{"backup over a file", src, []string{"backup", backup}, "backup: " + backup + " already exists; choose another name"},
		{"backup without a file", src, []string{"backup"}, "backup: missing argument"},
		{"backup of a missing database", "sqlite:" + filepath.Join(dir, "none.db"), []string{"backup", filepath.Join(dir, "x.db")}, "backup: no SQLite database at " + filepath.Join(dir, "none.db")},
		{"restore into a database with data", src, []string{"restore", backup}, "restore: the database sqlite:" + strings.TrimPrefix(src, "sqlite:") + " is not empty ("},
		{"restore a text file", "sqlite:" + filepath.Join(dir, "new1.db"), []string{"restore", text}, "restore: " + text + " is neither a SQLite database nor a pg_dump archive or script"},
		{"restore a foreign SQLite file", "sqlite:" + filepath.Join(dir, "new2.db"), []string{"restore", plainSQLite}, "restore: " + plainSQLite + " is a SQLite database but not a gpubook backup"},
		{"restore SQLite into PostgreSQL", "postgres://postgres@127.0.0.1:5432/nope", []string{"restore", backup}, "restore: " + backup + " is a sqlite backup, but the database URL is postgres"},
		{"restore a missing file", "sqlite:" + filepath.Join(dir, "new3.db"), []string{"restore", filepath.Join(dir, "missing.db")}, "restore: open " + filepath.Join(dir, "missing.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := gpubook(t, tt.url, tt.args...)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line starting %q", err, tt.want)
			}
		})
	}
	if !equalSnapshots(before, snapshot(t, src)) {
		t.Error("a refused restore changed the database")
	}
	for _, f := range []string{"new1.db", "new2.db", "new3.db", "x.db"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was written by a refused command", f)
		}
	}
}

// TestBackupRestorePostgres: pg_dump's archive of a filled database
// restores into a fresh, empty database with the same rows; a database
// with tables is refused. Needs pg_dump and pg_restore on PATH.
func TestBackupRestorePostgres(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH; docs/deploy.md has the commands", tool)
		}
	}
	src := storetest.MigratedURL(t, store.Postgres)
	fill(t, src)
	file := filepath.Join(t.TempDir(), "gpubook.dump")
	if out := mustGpubook(t, src, "backup", file); !strings.HasPrefix(out, "backed up postgres://") {
		t.Errorf("backup said %q", out)
	}
	dst := storetest.URL(t, store.Postgres)
	mustGpubook(t, dst, "restore", file)
	var unanalysed int
	if err := storetest.OpenURL(t, dst).SQL.QueryRow(
		`SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'bookings' AND last_analyze IS NULL`).Scan(&unanalysed); err != nil || unanalysed != 0 {
		t.Errorf("bookings not analysed after the restore (%d, %v)", unanalysed, err)
	}
	if a, b := snapshot(t, dst), snapshot(t, src); !equalSnapshots(a, b) {
		for k := range b {
			if !slices.Equal(a[k], b[k]) {
				t.Errorf("%s differs: %d rows restored, %d in the source", k, len(a[k]), len(b[k]))
			}
		}
	}
	before := snapshot(t, dst)
	_, _, err := gpubook(t, dst, "restore", file)
	if err == nil || !strings.Contains(err.Error(), "is not empty (") || !strings.Contains(err.Error(), "createdb a new one") {
		t.Errorf("restore into a restored database: %v", err)
	}
	if !equalSnapshots(before, snapshot(t, dst)) {
		t.Error("the refused restore changed the database")
	}
}

// TestPGConn: the password leaves the URL (which pg_dump's command line,
// and so ps, would show) for PGPASSWORD.
func TestPGConn(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, conn, env string }{
		{"postgres://gp:s3cret@db:5432/gpubook?sslmode=require", "postgres://gp@db:5432/gpubook?sslmode=require", "PGPASSWORD=s3cret"},
		{"postgres://gp@db/gpubook?password=p%40ss&sslmode=disable", "postgres://gp@db/gpubook?sslmode=disable", "PGPASSWORD=p@ss"},
		{"postgresql://db/gpubook", "postgresql://db/gpubook", ""},
	}
	for _, tt := range tests {
		conn, env := pgConn(tt.in)
		if conn != tt.conn || strings.Join(env, " ") != tt.env {
			t.Errorf("pgConn(%q) = %q, %q; want %q, %q", tt.in, conn, env, tt.conn, tt.env)
		}
	}
}
