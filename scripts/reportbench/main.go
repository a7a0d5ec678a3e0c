// Command reportbench measures the weekly report and the usage page on
// PostgreSQL or SQLite: per-minute records for 512 GPUs and 500 users
// (-minutes GPU-minutes, 5.2 million by default: one week; made by the
// database with INSERT … SELECT generate_series, in time order or, with
// -unordered, not), then, the way production gets there: the report and
// the usage page from the minutes alone, the roll job (store.RollUsage)
// catching up, the weekly send freezing the weeks before the benchmark's
// week (store.ReportWeekAt with freeze), and the usage page of the week in
// progress, of the same week computed over four weeks without snapshots,
// and of the just-ended week; each with its wall time and CPU time (this
// process and the PostgreSQL backend), beside one plain scan of the
// per-minute rows; then every usage page (my usage, a team's, the
// cluster's) of the week in progress through the wired router, alone and
// with 8 concurrent viewers, p50 and p99 (pages.go; docs/performance.md).
//
//	go run ./scripts/reportbench [-dialect sqlite] [-minutes 20000000] [-unordered]
//	go run ./scripts/reportbench -reuse URL -sql   # the page's statements, for EXPLAIN
//	go run ./scripts/reportbench -reuse URL -pages # only the usage pages, alone and with 8 viewers
//
// It only talks to PostgreSQL on 127.0.0.1, in a scratch database that it
// drops afterwards (SQLite: a file in a temporary folder). The same
// measurement runs as a Go benchmark with
// GPUBOOK_BENCH_PG=1 go test -run '^$' -bench . ./scripts/reportbench.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"gorm.io/gorm/logger"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func main() {
	admin := flag.String("admin", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL `URL` to create the scratch database on (127.0.0.1 only)")
	keep := flag.Bool("keep", false, "keep the scratch database (for EXPLAIN); print its URL")
	reuse := flag.String("reuse", "", "measure again on a database a -keep run left (its `URL`)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured run to `file`")
	minutes := flag.Int("minutes", gpus*weekMinutes, "GPU-minutes to generate (512 GPUs, ending with the benchmark's week)")
	unordered := flag.Bool("unordered", false, "write the minutes in a scrambled order, not in time order")
	dialect := flag.String("dialect", store.Postgres, "database: postgres or sqlite")
	printSQL := flag.Bool("sql", false, "with -reuse: print the statements of one usage-page view (week in progress) instead of measuring")
	pagesOnly := flag.Bool("pages", false, "with -reuse: time only the usage pages through the router (week in progress)")
	past := flag.Int("past", 0, "with -reuse -pages or -sql: view `minutes` past the hour, which the view reads minute by minute (the roll job sums an hour within 5 minutes of its end: 0–65)")
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
	sh := newShape(*minutes, benchWeek().End, *unordered)
	switch {
	case *reuse != "":
		err = remeasure(context.Background(), *reuse, *printSQL, *pagesOnly, time.Duration(*past)*time.Minute)
	case *dialect == store.SQLite:
		err = runSQLite(context.Background(), sh, *keep)
	case *dialect == store.Postgres:
		err = run(context.Background(), *admin, *keep, sh)
	default:
		err = fmt.Errorf("-dialect %q: want postgres or sqlite", *dialect)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "reportbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, adminURL string, keep bool, sh shape) error {
	dbURL, drop, err := scratchDB(adminURL)
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("keeping", dbURL)
	} else {
		defer drop()
	}
	return fillAndMeasure(ctx, dbURL, sh)
}

// runSQLite is run on a SQLite file in a temporary folder.
func runSQLite(ctx context.Context, sh shape, keep bool) error {
	dir, err := os.MkdirTemp("", "reportbench")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	return fillAndMeasure(ctx, "sqlite:"+filepath.Join(dir, "gpubook.db"), sh)
}

func fillAndMeasure(ctx context.Context, dbURL string, sh shape) error {
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
	if err := fill(ctx, db, sh); err != nil {
		return err
	}
	order := "in time order"
	if sh.unordered {
		order = "not in time order"
	}
	fmt.Printf("generated %d days of minutes, %s, in %v\n", sh.span/1440, order, time.Since(start).Round(time.Millisecond))
	res, err := measure(ctx, db, w)
	if err != nil {
		return err
	}
	res.print(os.Stdout)
	return nil
}

func remeasure(ctx context.Context, dbURL string, printSQL, pagesOnly bool, past time.Duration) error {
	if u, err := url.Parse(dbURL); err != nil || u.Hostname() != "127.0.0.1" {
		return fmt.Errorf("refusing %q: the benchmark runs against 127.0.0.1 only", dbURL)
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	// A kept database may predate migrations added since: bring it up to
	// date first, as gpubook serve would.
	if _, err := db.MigrateUp(ctx); err != nil {
		return fmt.Errorf("migrate the kept database: %w", err)
	}
	if printSQL {
		db.Gorm.Logger = logger.Default.LogMode(logger.Info)
		_, err := db.ReportWeekAt(ctx, benchWeek(), pageAsOf(benchWeek()).Add(past), models.DefaultReportRules, false)
		return err
	}
	if pagesOnly {
		ls, err := timePages(ctx, db, pageAsOf(benchWeek()).Add(past))
		for _, l := range ls {
			fmt.Println(l)
		}
		return err
	}
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
