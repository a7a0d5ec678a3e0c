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
// with 8 concurrent viewers, p50 and p99, and the first view on a replica
// just started (pages.go; docs/performance.md). -gpus sizes the cluster
// (512 by default; 50000 with -minutes 36000000 is the fleet's size with
// 12 hours of minutes).
//
//	go run ./scripts/reportbench [-dialect sqlite] [-minutes 20000000] [-unordered]
//	go run ./scripts/reportbench -reuse URL -sql   # the page's statements, for EXPLAIN
//	go run ./scripts/reportbench -reuse URL -pages # only the usage pages, alone and with 8 viewers
//	go run ./scripts/reportbench -dialect sqlite -minutes 20000000 -pages # fill, roll, freeze, then only the pages
//	go run ./scripts/reportbench -gpus 50000 -minutes 36000000 -pages -past 59 # the pages at the fleet's size
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
	nGPUs := flag.Int("gpus", gpus, "GPUs to generate minutes for (8 per node)")
	minutes := flag.Int("minutes", 0, "GPU-minutes to generate, ending with the benchmark's week (0: a week of every GPU's)")
	unordered := flag.Bool("unordered", false, "write the minutes in a scrambled order, not in time order")
	dialect := flag.String("dialect", store.Postgres, "database: postgres or sqlite")
	printSQL := flag.Bool("sql", false, "with -reuse: print the statements of one usage-page view (week in progress) instead of measuring")
	pagesOnly := flag.Bool("pages", false, "time only the usage pages through the router (week in progress): with -reuse on that database; else after the fill, the roll and the freezing of the weeks before, without the views from the minutes alone")
	pastMin := flag.Int("past", 0, "with -pages or -reuse -sql: view `minutes` past the hour, which the view reads minute by minute (the roll job sums an hour within 5 minutes of its end: 0–65)")
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
	if *nGPUs < gpusPerNode || *minutes < 0 {
		fmt.Fprintf(os.Stderr, "reportbench: -gpus needs a node (%d) and -minutes cannot be negative\n", gpusPerNode)
		os.Exit(2)
	}
	if *minutes == 0 {
		*minutes = *nGPUs * weekMinutes
	}
	end := benchWeek().End
	if *pagesOnly && *reuse == "" {
		// Only the pages, as of pageAsOf: the data ends where production's
		// would, an hour after (what -past reads minute by minute).
		end = pageAsOf(benchWeek()).Add(time.Hour)
	}
	past := time.Duration(*pastMin) * time.Minute
	sh := newShape(*nGPUs, *minutes, end, *unordered)
	switch {
	case *reuse != "":
		err = remeasure(context.Background(), *reuse, *printSQL, *pagesOnly, past)
	case *dialect == store.SQLite:
		err = runSQLite(context.Background(), sh, *keep, *pagesOnly, past)
	case *dialect == store.Postgres:
		err = run(context.Background(), *admin, *keep, sh, *pagesOnly, past)
	default:
		err = fmt.Errorf("-dialect %q: want postgres or sqlite", *dialect)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "reportbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, adminURL string, keep bool, sh shape, pagesOnly bool, past time.Duration) error {
	dbURL, drop, err := scratchDB(adminURL)
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("keeping", dbURL)
	} else {
		defer drop()
	}
	return fillAndMeasure(ctx, dbURL, sh, pagesOnly, past)
}

// runSQLite is run on a SQLite file in a temporary folder.
func runSQLite(ctx context.Context, sh shape, keep, pagesOnly bool, past time.Duration) error {
	dir, err := os.MkdirTemp("", "reportbench")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	return fillAndMeasure(ctx, "sqlite:"+filepath.Join(dir, "gpubook.db"), sh, pagesOnly, past)
}

func fillAndMeasure(ctx context.Context, dbURL string, sh shape, pagesOnly bool, past time.Duration) error {
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
	fmt.Printf("generated %d hours of minutes on %d GPUs, %s, in %v\n", sh.span/60, sh.gpus, order, time.Since(start).Round(time.Millisecond))
	if pagesOnly {
		return rollAndPages(ctx, db, dbURL, w, past)
	}
	res, err := measure(ctx, db, w)
	if err != nil {
		return err
	}
	res.print(os.Stdout)
	return nil
}

func remeasure(ctx context.Context, dbURL string, printSQL, pagesOnly bool, past time.Duration) error {
	if u, err := url.Parse(dbURL); err != nil || u.Hostname() != "127.0.0.1" && u.Scheme != "sqlite" {
		return fmt.Errorf("refusing %q: the benchmark runs against 127.0.0.1 or a SQLite file only", dbURL)
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
		return pagesAndStart(ctx, db, dbURL, pageAsOf(benchWeek()).Add(past))
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
