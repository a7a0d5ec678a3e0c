// Command reportbench measures the weekly report run on PostgreSQL: a week
// of per-minute records for 512 GPUs and 500 users (5.2 million GPU-minutes
// and 3.3 million user-minutes, made by INSERT … SELECT generate_series),
// then the time and peak memory of computing and rendering every user's
// report, beside the time of one plain scan of the per-minute rows.
//
//	go run ./scripts/reportbench
//
// It only talks to PostgreSQL on 127.0.0.1, in a scratch database that it
// drops afterwards. The same measurement runs as a Go benchmark with
// GPUBOOK_BENCH_PG=1 go test -run '^$' -bench . ./scripts/reportbench.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"runtime/pprof"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func main() {
	admin := flag.String("admin", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL `URL` to create the scratch database on (127.0.0.1 only)")
	keep := flag.Bool("keep", false, "keep the scratch database (for EXPLAIN); print its URL")
	reuse := flag.String("reuse", "", "measure again on a database a -keep run left (its `URL`)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured run to `file`")
	flag.Parse()
	var err error
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reportbench:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "reportbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *reuse != "" {
		err = remeasure(context.Background(), *reuse)
	} else {
		err = run(context.Background(), *admin, *keep)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "reportbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, adminURL string, keep bool) error {
	dbURL, drop, err := scratchDB(adminURL)
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("keeping", dbURL)
	} else {
		defer drop()
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.MigrateUp(ctx); err != nil {
		return err
	}
	start := time.Now()
	w := benchWeek()
	if err := fill(ctx, db, w.Start); err != nil {
		return err
	}
	fmt.Printf("generated the week in %v\n", time.Since(start).Round(time.Millisecond))
	res, err := measure(ctx, db, w)
	if err != nil {
		return err
	}
	res.print(os.Stdout)
	return nil
}

func remeasure(ctx context.Context, dbURL string) error {
	if u, err := url.Parse(dbURL); err != nil || u.Hostname() != "127.0.0.1" {
		return fmt.Errorf("refusing %q: the benchmark runs against 127.0.0.1 only", dbURL)
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := measure(ctx, db, benchWeek())
	if err != nil {
		return err
	}
	res.print(os.Stdout)
	return nil
}

// scratchDB creates a fresh database on the local server and returns its
// URL and a function that drops it.
func scratchDB(adminURL string) (string, func(), error) {
	u, err := url.Parse(adminURL)
	if err != nil || u.Hostname() != "127.0.0.1" {
		return "", nil, fmt.Errorf("refusing %q: the benchmark runs against 127.0.0.1 only", u.Redacted())
	}
	dbURL, drop, err := storetest.ScratchPostgres(context.Background(), adminURL, "gpubook_reportbench")
	if err != nil {
		return "", nil, err
	}
	return dbURL, func() {
		if err := drop(); err != nil {
			fmt.Fprintln(os.Stderr, "reportbench:", err)
		}
	}, nil
}
