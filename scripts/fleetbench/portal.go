package main

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gpubook/gpubook/scripts/internal/serveproc"
)

// replica is one started `gpubook serve` process.
type replica struct{ *serveproc.Server }

// startReplica runs the server and waits for /healthz. It trusts
// 127.0.0.1 as its proxy (X-Forwarded-For, see timed) and signs browsers
// in with the development sign-in.
func startReplica(ctx context.Context, bin, dbURL string) (*replica, error) {
	s, err := serveproc.Start(ctx, bin, dbURL, "GPUBOOK_DEV_LOGIN=1", "GPUBOOK_TRUSTED_PROXIES=127.0.0.1")
	if err != nil {
		return nil, err
	}
	return &replica{s}, nil
}

func (r *replica) stop() { r.Stop() }

// procCPU is the user and system CPU time a process has used so far.
func procCPU(pid int) (time.Duration, bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// Fields after the command (which may hold spaces) start at state.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, true // USER_HZ is 100 on Linux
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pgCPU follows the CPU time of the PostgreSQL backends serving one
// database (autovacuum workers on it included): it lists them every
// second and keeps each one's last reading, so that a backend that has
// exited still counts. The server's shared processes (WAL writer,
// checkpointer) are not in it: other databases on the same server share
// them.
type pgCPU struct {
	admin *sql.DB
	db    string
	mu    sync.Mutex
	seen  map[int]time.Duration
	ok    bool // some backend's /proc entry could be read
}

func newPGCPU(admin *sql.DB, db string) *pgCPU {
	return &pgCPU{admin: admin, db: db, seen: map[int]time.Duration{}}
}

func (p *pgCPU) run(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		p.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *pgCPU) poll(ctx context.Context) {
	rows, err := p.admin.QueryContext(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = $1", p.db)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			continue
		}
		if d, ok := procCPU(pid); ok {
			p.mu.Lock()
			p.seen[pid], p.ok = max(p.seen[pid], d), true
			p.mu.Unlock()
		}
	}
}

// total is the CPU time of every backend seen so far.
func (p *pgCPU) total(ctx context.Context) (time.Duration, bool) {
	p.poll(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum time.Duration
	for _, d := range p.seen {
		sum += d
	}
	return sum, p.ok
}
