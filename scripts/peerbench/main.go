// Command peerbench measures gpubook beside canhazgpu, the peer tool a lab
// would otherwise pick, on the same machine in the same run, for what users
// do most: book one GPU now and release it (from a kept-alive client, and
// from a shell: two curl processes against two canhazgpu processes), see
// what is free, and look at the live status page. It prints
// gpubook/canhazgpu, the time of one gpubook operation over the time of
// the same operation in canhazgpu: under 1 means gpubook is faster.
//
// canhazgpu is built from its unmodified source (copied to a temporary
// directory; its keep-alive client is added there as a new command, which
// drives canhazgpu's own allocation engine) and runs on a private Redis on
// a loopback port with its fake GPU provider, its best case. gpubook runs
// in a child process on a fresh SQLite file and a fresh PostgreSQL database
// on 127.0.0.1 (dropped afterwards).
//
//	go build -o /tmp/peerbench ./scripts/peerbench && /tmp/peerbench
//
// Only 127.0.0.1 is contacted; every loop is bounded in time and count.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gpubook/gpubook/models/store"
)

type options struct {
	dialects []string
	rounds   int
	d        time.Duration // per side and round, kept-alive rows
	shellN   int           // pairs per side and round from the shell
	pgAdmin  string
	peerSrc  string
	gpus     int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case len(os.Args) == 3 && os.Args[1] == "serve":
		err = serve(ctx, os.Args[2])
	case len(os.Args) > 1 && os.Args[1] == "floor-serve":
		err = floorServe(ctx, os.Args[2:])
	default:
		err = run(ctx, os.Args, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("peerbench", flag.ContinueOnError)
	dbs := fs.String("db", "sqlite,postgres", "gpubook's databases")
	rounds := fs.Int("rounds", 5, "rounds per row, each measuring gpubook and canhazgpu back to back (1-20)")
	d := fs.Duration("d", 2*time.Second, "time per side and round for the kept-alive rows (at most 10s)")
	shellN := fs.Int("shell-n", 30, "book+release pairs per side and round from the shell (at most 200)")
	pgAdmin := fs.String("pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server (127.0.0.1 only)")
	peerSrc := fs.String("peer", "/work/shared/peers/canhazgpu", "canhazgpu's source (read only)")
	cpuProfile := fs.String("cpuprofile", "", "write CPU profiles of the gpubook server to `file`.sqlite and file.postgres")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *cpuProfile != "" {
		os.Setenv("PEERBENCH_CPUPROFILE", *cpuProfile)
	}
	o := options{dialects: strings.Split(*dbs, ","), rounds: min(max(*rounds, 1), 20), d: min(*d, 10*time.Second),
		shellN: min(max(*shellN, 1), 200), pgAdmin: *pgAdmin, peerSrc: *peerSrc, gpus: 8}
	if !strings.Contains(o.pgAdmin, "@127.0.0.1:") && !strings.Contains(o.pgAdmin, "@localhost:") {
		return fmt.Errorf("refusing %s: peerbench only talks to 127.0.0.1", o.pgAdmin)
	}
	dir, err := os.MkdirTemp("", "peerbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(out, "load average at start: %s", loadAvg())
	pr, err := startPeer(ctx, o.peerSrc, dir, o.gpus)
	if err != nil {
		return err
	}
	defer pr.close()
	fmt.Fprintf(out, "| database | what a user does | gpubook per op | canhazgpu per op | gpubook/canhazgpu, median (range of %d rounds) | target | floor per op | floor/canhazgpu |\n|---|---|---|---|---|---|---|---|\n", o.rounds)
	var notes []string
	for _, dialect := range o.dialects {
		if err := measure(ctx, o, dialect, dir, pr, out, &notes); err != nil {
			return fmt.Errorf("%s: %w", dialect, err)
		}
	}
	fmt.Fprintln(out)
	for _, n := range notes {
		fmt.Fprintln(out, n)
	}
	fmt.Fprintf(out, "load average at end: %s", loadAvg())
	return nil
}

// row is one line of the table: a gpubook and a canhazgpu operation, and
// where there is one the floor under gpubook's: the same work without
// gpubook (see floors.go), which no implementation goes under.
type row struct {
	what    string
	gpubook func() (time.Duration, error)
	peer    func() (time.Duration, error)
	floor   func() (time.Duration, error) // nil: none
	sqlOnly func() (time.Duration, error) // the floor's database work alone; nil: none
}

// measure runs every row on gpubook on one database against the peer.
func measure(ctx context.Context, o options, dialect, dir string, pr *peer, out io.Writer, notes *[]string) error {
	p, err := startPortal(ctx, dialect, o.pgAdmin, dir, o.gpus)
	if err != nil {
		return err
	}
	defer p.close()
	api := &http.Client{Timeout: 30 * time.Second}
	web := &http.Client{Timeout: 30 * time.Second}
	bearer := http.Header{"Authorization": {"Bearer " + p.token}}
	const many = 1 << 30
	timed := func(op func() error) func() (time.Duration, error) {
		return func() (time.Duration, error) { return perOp(o.d, many, op) }
	}
	shell := func(op func() error) func() (time.Duration, error) {
		return func() (time.Duration, error) { return perOp(time.Minute, o.shellN, op) }
	}
	sqlFloor, err := newSQLFloor(ctx, p)
	if err != nil {
		return err
	}
	defer sqlFloor.close()
	floorURL, err := startHTTPFloor(ctx, p)
	if err != nil {
		return err
	}
	bare := startBareAPI()
	defer bare.Close()
	rows := []row{
		{"book 1 GPU now + release, one kept-alive client", timed(bookRelease(ctx, api, p.url, p.token, p.gpuID)),
			func() (time.Duration, error) { return peerBookRelease(ctx, pr, o.d, many) },
			timed(bookRelease(ctx, &http.Client{Timeout: 30 * time.Second}, floorURL, p.token, sqlFloor.p.GPU)),
			timed(sqlFloor.pair(ctx))},
		{"the same from a shell (2 curl / 2 canhazgpu processes)", shell(gpubookShell(ctx, p.url, p.token, p.gpuID)), shell(peerShell(ctx, pr)),
			shell(gpubookShell(ctx, bare.URL, p.token, p.gpuID)), nil},
		{"what is free now (`/api/v1/gpus` / `/api/status`)", timed(pages(ctx, api, bearer, p.url+"/api/v1/gpus")),
			timed(pages(ctx, web, nil, pr.web+"/api/status")), nil, nil},
		{"live status page, signed in (`/status` / dashboard `/` + its two data calls)", timed(pages(ctx, p.status, nil, p.url+"/status")),
			timed(pages(ctx, web, nil, pr.web+"/", pr.web+"/api/hosts/status", pr.web+"/api/queue")), nil, nil},
	}
	target := 1.0
	if dialect == store.Postgres {
		target = 1.5
	}
	for _, r := range rows {
		// A short warm-up of each side: connections, caches, page faults.
		if _, err := r.gpubook(); err != nil {
			return fmt.Errorf("%s: gpubook: %w", r.what, err)
		}
		if _, err := r.peer(); err != nil {
			return fmt.Errorf("%s: canhazgpu: %w", r.what, err)
		}
		var pp pair
		var floors, sqlOnly []time.Duration
		for i := range o.rounds {
			first, second := r.gpubook, r.peer
			if i%2 == 1 { // alternate which side goes first
				first, second = second, first
			}
			a, err := first()
			if err != nil {
				return fmt.Errorf("%s: %w", r.what, err)
			}
			b, err := second()
			if err != nil {
				return fmt.Errorf("%s: %w", r.what, err)
			}
			if i%2 == 1 {
				a, b = b, a
			}
			pp.g, pp.c = append(pp.g, a), append(pp.c, b)
			for _, m := range []struct {
				f    func() (time.Duration, error)
				into *[]time.Duration
				what string
			}{{r.floor, &floors, "floor"}, {r.sqlOnly, &sqlOnly, "database work alone"}} {
				if m.f == nil {
					continue
				}
				f, err := m.f()
				if err != nil {
					return fmt.Errorf("%s: %s: %w", r.what, m.what, err)
				}
				*m.into = append(*m.into, f)
			}
		}
		rs := pp.ratios()
		floor, floorRatio := "–", "–"
		if len(floors) > 0 {
			floor, floorRatio = us(median(floors)), fmt.Sprintf("%.2f", float64(median(floors))/float64(median(pp.c)))
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | **%.2f** (%.2f–%.2f) | ≤ %.1f | %s | %s |\n", dialect, r.what, us(median(pp.g)), us(median(pp.c)),
			median(rs), rs[0], rs[len(rs)-1], target, floor, floorRatio)
		if len(sqlOnly) > 0 {
			*notes = append(*notes, fmt.Sprintf("%s, %s: its database work alone, in one process: %s (%.2f of canhazgpu)", dialect, r.what,
				us(median(sqlOnly)), float64(median(sqlOnly))/float64(median(pp.c))))
		}
	}
	return nil
}

func us(d time.Duration) string {
	if d >= 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%d µs", d.Microseconds())
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown\n"
	}
	return string(b)
}
