package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

var ctx = context.Background()

// syncBuffer is a bytes.Buffer that a running server may write while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gpubook runs the command line in-process against the database at url.
func gpubook(t *testing.T, url string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut syncBuffer
	env := envOf(map[string]string{"GPUBOOK_DATABASE_URL": url, "GPUBOOK_TIMEZONE": "Asia/Shanghai"})
	err = run(ctx, append([]string{"gpubook"}, args...), env, &out, &errOut)
	return out.String(), errOut.String(), err
}

// mustGpubook is gpubook for commands that must succeed.
func mustGpubook(t *testing.T, url string, args ...string) string {
	t.Helper()
	out, errOut, err := gpubook(t, url, args...)
	if err != nil {
		t.Fatalf("gpubook %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// eachDialect runs fn on a fresh, empty database of each dialect, side by
// side (parallel subtests: they run after the caller returns): for the
// tests of a command's first run, which migrates the database.
func eachDialect(t *testing.T, fn func(t *testing.T, url string)) {
	eachDialectOn(t, storetest.URL, fn)
}

// eachMigrated is eachDialect on databases already migrated (copies of a
// migrated one, or emptied ones): for the tests of what a command does on
// a working database. Migrating a fresh PostgreSQL database cost its server
// 0.3 s of CPU, once in each of these tests.
func eachMigrated(t *testing.T, fn func(t *testing.T, url string)) {
	eachDialectOn(t, storetest.MigratedURL, fn)
}

func eachDialectOn(t *testing.T, newURL func(testing.TB, string) string, fn func(t *testing.T, url string)) {
	for _, d := range []string{store.SQLite, store.Postgres} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			fn(t, newURL(t, d))
		})
	}
}

func countUsers(t *testing.T, url string) int64 {
	t.Helper()
	n, err := storetest.OpenURL(t, url).CountUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// statusRows returns migrate status's rows without the header.
func statusRows(t *testing.T, url string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(mustGpubook(t, url, "migrate", "status")), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "VERSION FILE APPLIED AT" {
		t.Fatalf("status header = %q", got)
	}
	rows := make([][]string, 0, len(lines)-1)
	for _, l := range lines[1:] {
		rows = append(rows, strings.Fields(l))
	}
	return rows
}

func pendingRows(rows [][]string) int {
	n := 0
	for _, r := range rows {
		if r[2] == "pending" {
			n++
		}
	}
	return n
}

// The migrations of other features come and go; the test counts what is there.
func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, url string) {
		rows := statusRows(t, url)
		n := len(rows)
		if n == 0 || rows[0][0] != "1" || rows[0][1] != "00001_init.sql" || pendingRows(rows) != n {
			t.Fatalf("status before up = %v, want every migration pending, 1 first", rows)
		}
		if out := mustGpubook(t, url, "migrate"); out != fmt.Sprintf("applied %d migration(s); the database is up to date\n", n) {
			t.Errorf("up: %q", out)
		}
		rows = statusRows(t, url)
		today := time.Now().UTC().Format("2006-01-02")
		for _, r := range rows {
			if len(r) != 3 || !strings.HasPrefix(r[2], today) {
				t.Errorf("status row after up = %v, want applied today", r)
			}
		}
		newest := rows[n-1][0]
		if out := mustGpubook(t, url, "migrate", "down-one"); out != "rolled back migration "+newest+"\n" {
			t.Errorf("down-one: %q, want migration %s", out, newest)
		}
		if p := pendingRows(statusRows(t, url)); p != 1 {
			t.Errorf("pending after down-one = %d, want 1", p)
		}
		if out := mustGpubook(t, url, "migrate", "up"); out != "applied 1 migration(s); the database is up to date\n" {
			t.Errorf("up again: %q", out)
		}
		for i := 0; i < n; i++ {
			mustGpubook(t, url, "migrate", "down-one")
		}
		if _, _, err := gpubook(t, url, "migrate", "down-one"); err == nil || !strings.Contains(err.Error(), "nothing to roll back") {
			t.Errorf("down-one on empty schema: %v", err)
		}
		if out := mustGpubook(t, url, "migrate", "up"); out != fmt.Sprintf("applied %d migration(s); the database is up to date\n", n) {
			t.Errorf("up from empty: %q", out)
		}
		if out := mustGpubook(t, url, "migrate", "up"); !strings.Contains(out, "applied 0 migration(s)") {
			t.Errorf("up when current: %q", out)
		}
		if _, _, err := gpubook(t, url, "migrate", "sideways"); err == nil || !strings.Contains(err.Error(), `unknown action "sideways"`) {
			t.Errorf("bad action: %v", err)
		}
	})
}

func TestUserCommands(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, url string) {
		if out := mustGpubook(t, url, "user", "add", "--email", "Ada@Example.org", "--name", "Ada Lovelace", "--admin"); out != "added admin 1: Ada Lovelace <ada@example.org>\n" {
			t.Errorf("add: %q", out)
		}
		mustGpubook(t, url, "user", "add", "--name", "王磊", "--email", "wang.lei@example.org", "--language", "zh-CN", "--time-zone", "Asia/Shanghai")
		out := mustGpubook(t, url, "user", "list")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 {
			t.Fatalf("list has %d lines, want header + 2:\n%s", len(lines), out)
		}
		for i, want := range [][]string{{"ID", "EMAIL", "NAME", "UNIX", "ADMIN", "TEAMS"}, {"1", "ada@example.org", "Ada", "Lovelace", "ada", "(assumed)", "yes", "-"}, {"2", "wang.lei@example.org", "王磊", "wang.lei", "(assumed)", "no", "-"}} {
			if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("line %d = %q, want %q", i, got, want)
			}
		}
		_, _, err := gpubook(t, url, "user", "add", "--email", "ada@example.org", "--name", "Again")
		if err == nil || err.Error() != "user add: This user already exists." {
			t.Errorf("duplicate: %v", err)
		}
		if n := countUsers(t, url); n != 2 {
			t.Errorf("users = %d, want 2", n)
		}
	})
}

// Bad input gives one clear message, prints nothing on stdout and writes nothing.
func TestUserAddBadInput(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		tests := []struct {
			args []string
			want string
		}{
			{[]string{"--email", "not-an-email", "--name", "X"}, "user add: --email: This is not a valid email address"},
			{[]string{"--email", "x@example.org"}, "user add: --name: Name is required"},
			{[]string{"--email", "x@example.org", "--name", "X", "--time-zone", "Mars/Olympus"}, "user add: --time-zone: Unknown time zone"},
			{[]string{"--email", "x@example.org", "--name", "X", "--language", "fr"}, "user add: --language: This language is not supported"},
			{[]string{"--email", "x@example.org", "--name", "X", "--admn"}, "user add: flag provided but not defined: -admn"},
			{[]string{"--email", "x@example.org", "--name", "X", "extra"}, "user add: wrong number of arguments"},
			{[]string{"--email", "x@example.org", "--name", "Eve\r\nAdmin"}, "user add: --name: Remove the control characters"},
			{[]string{"--email", "x@example.org", "--name", "Eve\x00"}, "user add: --name: Remove the control characters"},
			{[]string{"--email", "x@example.org", "--name", strings.Repeat("名", 5000)}, "user add: --name: At most 200 characters"},
			{[]string{"--email", "x@example.org\r\nbcc: y@example.org", "--name", "X"}, "user add: --email: This is not a valid email address"},
			{[]string{"--email", "x@example.org", "--name", "X", "--sso-subject", "s\x00"}, "user add: --sso-subject: Remove the control characters"},
		}
		for _, tt := range tests {
			out, _, err := gpubook(t, url, append([]string{"user", "add"}, tt.args...)...)
			if err == nil || err.Error() != tt.want && !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("%v: error = %v, want %q", tt.args, err, tt.want)
			}
			if out != "" {
				t.Errorf("%v: stdout = %q, want nothing", tt.args, out)
			}
		}
		if n := countUsers(t, url); n != 0 {
			t.Errorf("users = %d after bad input, want 0", n)
		}
	})
}
