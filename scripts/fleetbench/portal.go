package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// replica is one started `gpubook serve` process.
type replica struct {
	cmd  *exec.Cmd
	base string
}

// startReplica runs the server on a free loopback port and waits for
// /healthz. It trusts 127.0.0.1 as its proxy (X-Forwarded-For, see timed)
// and signs browsers in with the development sign-in.
func startReplica(ctx context.Context, bin, dbURL string) (*replica, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(ctx, bin, "serve")
	cmd.Env = append(os.Environ(), "GPUBOOK_DATABASE_URL="+dbURL, "GPUBOOK_LISTEN="+addr, "GPUBOOK_LOG_LEVEL=error",
		"GPUBOOK_OIDC_ISSUER=", "GPUBOOK_SMTP_HOST=", "GPUBOOK_DEV_LOGIN=1", "GPUBOOK_TRUSTED_PROXIES=127.0.0.1")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &replica{cmd: cmd, base: "http://" + addr}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(r.base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r, nil
			}
		}
	}
	r.stop()
	return nil, fmt.Errorf("replica did not answer /healthz within 60 s")
}

func (r *replica) stop() {
	_ = r.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
}

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
