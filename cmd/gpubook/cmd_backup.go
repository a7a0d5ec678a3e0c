package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gpubook/gpubook/models/store"
)

// backup runs "gpubook backup FILE": a consistent copy of the live
// database, taken while the server runs. SQLite: VACUUM INTO (one read
// transaction; writers go on). PostgreSQL: pg_dump's custom format, when
// pg_dump is installed; otherwise the command to run is printed. FILE is
// 0600 whatever the umask: it holds every user's data.
func (c *cli) backup(ctx context.Context, args []string) error {
	f := newFlags("backup", "gpubook backup FILE [--database-url URL]",
		"Writes a consistent copy of the database to FILE while gpubook runs. SQLite: a database file\n"+
			"(VACUUM INTO). PostgreSQL: a pg_dump archive (--format=custom), made by the pg_dump on PATH;\n"+
			"its major version must be the server's or newer. FILE must not exist; it is written 0600. Restore with 'gpubook restore'.", false)
	cfg, pos, err := f.parse(c, args, 1, 1)
	if err != nil {
		return err
	}
	file := pos[0]
	if _, err := os.Lstat(file); err == nil {
		return fmt.Errorf("backup: %s already exists; choose another name (a backup never overwrites a file)", file)
	}
	tmp := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".partial")
	os.Remove(tmp)
	// The copy is made in a file created here, empty and 0600 whatever the
	// umask: VACUUM INTO and pg_dump write into an existing file and keep
	// its mode, so no byte of the database is ever readable by others.
	if err := createPrivateFile(tmp); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if cfg.Dialect == store.Postgres {
		err = pgDump(ctx, cfg.DatabaseURL, tmp)
	} else {
		err = c.backupSQLite(ctx, cfg.DatabaseURL, tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // in case a tool made the file anew
		os.Remove(tmp)
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("backup: %w", err)
	}
	st, err := os.Stat(file)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(c.stdout, "backed up %s to %s (%d bytes)\n", store.RedactURL(cfg.DatabaseURL), file, st.Size())
	return nil
}

// createPrivateFile creates path empty with mode 0600, past the umask. It
// fails if anything is at path already, a symbolic link included.
func createPrivateFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// backupSQLite copies the database with VACUUM INTO and checks the copy.
// It does not migrate: a backup is of the database as it is.
func (c *cli) backupSQLite(ctx context.Context, dbURL, to string) error {
	path, _ := store.SQLitePath(dbURL)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("backup: no SQLite database at %s (%w)", path, err)
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer db.Close()
	if err := db.BackupSQLite(ctx, to); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := store.CheckSQLiteFile(ctx, to); err != nil {
		return fmt.Errorf("backup: the copy does not check out: %w", err)
	}
	return nil
}

// pgDumpArgs are the options of every dump: a custom-format archive
// without owners and grants, so that it restores under another role.
var pgDumpArgs = []string{"--format=custom", "--no-owner", "--no-privileges"}

// pgDump runs pg_dump into file, with the password (if any) in the
// environment rather than on the command line, where ps would show it.
func pgDump(ctx context.Context, dbURL, file string) error {
	conn, env := pgConn(dbURL)
	bin, err := exec.LookPath("pg_dump")
	if err != nil {
		return fmt.Errorf("backup: pg_dump is not on PATH; install the PostgreSQL client or run: pg_dump %s --file=FILE '%s'",
			strings.Join(pgDumpArgs, " "), store.RedactURL(dbURL))
	}
	args := append(append([]string{}, pgDumpArgs...), "--file="+file, "--dbname="+conn)
	return runPGTool(ctx, "backup", bin, args, env)
}

// pgConn splits a PostgreSQL URL into one without the password and the
// environment that carries it (PGPASSWORD) to libpq's tools.
func pgConn(dbURL string) (conn string, env []string) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return dbURL, nil
	}
	var pw string
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			pw = p
			u.User = url.User(u.User.Username())
		}
	}
	if q := u.Query(); q.Has("password") {
		pw = q.Get("password")
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	if pw != "" {
		env = append(env, "PGPASSWORD="+pw)
	}
	return u.String(), env
}

// runPGTool runs a PostgreSQL client tool and turns its failure into one
// line: the tool's last message.
func runPGTool(ctx context.Context, prefix, bin string, args, env []string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		msg := strings.TrimSpace(lines[len(lines)-1])
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%s: %s failed: %s", prefix, filepath.Base(bin), msg)
	}
	return nil
}

// isNotExist reports a missing file, through the wrapping of os errors.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
