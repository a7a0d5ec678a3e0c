package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// result is one measured level: every request's latency and the wall time.
type result struct {
	lat    []time.Duration
	wall   time.Duration
	errors int
	count  int     // when lat is not kept (pgbench)
	tps    float64 // when the tool reports it (pgbench)
}

func (r result) perSecond() float64 {
	if r.tps > 0 {
		return r.tps
	}
	n := r.count
	if n == 0 {
		n = len(r.lat)
	}
	return float64(n) / r.wall.Seconds()
}

func (r result) quantile(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), r.lat...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// load sends n booking requests from c concurrent clients (or stops after maxTime).
func (t *target) load(ctx context.Context, clients, n int, maxTime time.Duration) result {
	hc := loadClient(clients)
	base := t.next
	t.next += n
	return drive(clients, n, maxTime, func(k int) error {
		return post(ctx, hc, t.url, t.tokens[(base+k)%len(t.tokens)], t.body(base+k))
	})
}

// loadClient is the HTTP client of a level: one kept-alive connection per client.
func loadClient(clients int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
}

// drive calls op from clients goroutines, op(0), op(1), … up to n calls
// (n <= 0: no limit) or until d has passed, and records each call's latency
// and whether it failed. Both the API load and the SQLite baseline use it,
// so their figures are taken the same way.
func drive(clients, n int, d time.Duration, op func(k int) error) result {
	var next atomic.Int64
	var mu sync.Mutex
	res := result{}
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if (n > 0 && k >= n) || time.Now().After(deadline) {
					return
				}
				t0 := time.Now()
				err := op(k)
				lat := time.Since(t0)
				mu.Lock()
				res.lat = append(res.lat, lat)
				if err != nil {
					res.errors++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.wall = time.Since(start)
	return res
}

// post creates one booking on the server at base; anything but 201 Created
// is a failure.
func post(ctx context.Context, hc *http.Client, base, token, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/bookings", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	return nil
}

// rawInserts measures the database's own rate for one transaction that
// inserts one row, at the same client count, on the same database.
func rawInserts(ctx context.Context, dialect string, db *store.DB, dbURL string, clients int, d time.Duration) (result, error) {
	ddl := "CREATE TABLE IF NOT EXISTS bench_raw (id INTEGER PRIMARY KEY AUTOINCREMENT, gpu_id INTEGER NOT NULL, starts_at DATETIME NOT NULL, note TEXT NOT NULL)"
	if dialect == store.Postgres {
		ddl = "CREATE TABLE IF NOT EXISTS bench_raw (id BIGSERIAL PRIMARY KEY, gpu_id BIGINT NOT NULL, starts_at TIMESTAMPTZ NOT NULL, note TEXT NOT NULL)"
	}
	if _, err := db.SQL.ExecContext(ctx, ddl); err != nil {
		return result{}, err
	}
	if dialect == store.Postgres {
		return pgbench(ctx, dbURL, clients, d)
	}
	return sqliteLoop(ctx, db.SQL, clients, d), nil
}

// sqliteLoop is the SQLite baseline: each client runs BEGIN IMMEDIATE (the
// DSN's _txlock), one INSERT, COMMIT, through the same pool gpubook uses.
func sqliteLoop(ctx context.Context, sqlDB *sql.DB, clients int, d time.Duration) result {
	return drive(clients, 0, d, func(int) error {
		tx, err := sqlDB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO bench_raw (gpu_id, starts_at, note) VALUES (?, ?, ?)", 1, time.Now().UTC(), "raw"); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

var tpsRE = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
var latRE = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
var failedRE = regexp.MustCompile(`number of failed transactions: ([0-9]+)`)
var doneRE = regexp.MustCompile(`number of transactions actually processed: ([0-9]+)`)

// pgbench runs pgbench with a one-line script: one INSERT, its own transaction.
// Its p50 column shows the average latency (pgbench reports no median).
func pgbench(ctx context.Context, dbURL string, clients int, d time.Duration) (result, error) {
	return runPgbench(ctx, dbURL, "INSERT INTO bench_raw (gpu_id, starts_at, note) VALUES (1, now(), 'raw');\n", clients, d)
}

// runPgbench runs script with pgbench for d at clients clients (threads:
// at most 4), after the flags in extra, and reads its report.
func runPgbench(ctx context.Context, dbURL, script string, clients int, d time.Duration, extra ...string) (result, error) {
	dir, err := os.MkdirTemp("", "bookload")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "script.sql")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		return result{}, err
	}
	args := append([]string{"-n"}, extra...)
	args = append(args, "-f", path, "-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(clients, 4)),
		"-T", strconv.Itoa(max(1, int(d.Seconds()))), dbURL)
	out, err := exec.CommandContext(ctx, "pgbench", args...).CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("pgbench: %w: %s", err, out)
	}
	return parsePgbench(out)
}

// parsePgbench reads pgbench's rate and average latency from its report;
// a run with failed transactions is an error (every one should succeed).
func parsePgbench(out []byte) (result, error) {
	if f := failedRE.FindSubmatch(out); f != nil && string(f[1]) != "0" {
		return result{}, fmt.Errorf("pgbench: %s transactions failed: %s", f[1], out)
	}
	m := tpsRE.FindSubmatch(out)
	if m == nil {
		return result{}, fmt.Errorf("pgbench: no tps in %s", out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	res := result{tps: tps}
	if d := doneRE.FindSubmatch(out); d != nil {
		res.count, _ = strconv.Atoi(string(d[1]))
	}
	if l := latRE.FindSubmatch(out); l != nil {
		avg, _ := strconv.ParseFloat(string(l[1]), 64)
		res.lat = []time.Duration{time.Duration(avg * float64(time.Millisecond))}
	}
	return res, nil
}

// scratchDB makes a fresh database: a temporary SQLite file, or a new
// PostgreSQL database on the local server, dropped by cleanup.
func scratchDB(ctx context.Context, dialect, pgAdmin string) (string, func(), error) {
	if dialect == store.SQLite {
		dir, err := os.MkdirTemp("", "bookload")
		if err != nil {
			return "", nil, err
		}
		return "sqlite:" + filepath.Join(dir, "load.db"), func() { os.RemoveAll(dir) }, nil
	}
	if dialect != store.Postgres {
		return "", nil, fmt.Errorf("unknown database %q", dialect)
	}
	u, drop, err := storetest.ScratchPostgres(ctx, pgAdmin, "bookload")
	if err != nil {
		return "", nil, err
	}
	return u, func() {
		if err := drop(); err != nil {
			fmt.Fprintln(os.Stderr, "bookload:", err)
		}
	}, nil
}
