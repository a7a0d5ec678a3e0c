package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

// benchWeek is the week the data ends with: 2036-W10, in UTC, far enough
// ahead that its days get their own partitions on PostgreSQL (the days
// before migration 00018 ran stay in its legacy partition).
func benchWeek() models.Week {
	w, _ := models.ParseWeek("2036-W10", time.UTC)
	return w
}

// pageAsOf is "now" for the usage-page view: the week in progress, 36 hours
// before its end.
func pageAsOf(w models.Week) time.Time { return w.End.Add(-36 * time.Hour) }

// endedAsOf is "now" for the just-ended week: an hour after its end,
// before the weekly send has frozen it.
func endedAsOf(w models.Week) time.Time { return w.End.Add(time.Hour) }

// cost is one view's time: wall is the best of 3 runs (the server's
// default settings, parallel workers allowed); client and server are the
// CPU time of one run, averaged over cpuRuns runs, of this process and of
// the PostgreSQL backend (one connection, no parallel workers, so that the
// backend's CPU is all of the server's; SQLite: all in client).
type cost struct {
	wall, client, server time.Duration
	// noServer: the backend's /proc entry could not be read (a server in
	// another container or host), so server is not a measurement.
	noServer bool
}

const cpuRuns = 5

func (c cost) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
	server := ms(c.server) + " server"
	if c.noServer {
		server = "server unknown (its /proc entry cannot be read)"
	}
	return fmt.Sprintf("%s wall (best of 3), CPU %s client + %s", ms(c.wall), ms(c.client), server)
}

type result struct {
	dialect                        string
	minuteRows, userRows, bookings int64
	hourRows, userHourRows         int64
	hourBytes, userHourBytes       int64         // PostgreSQL: the rollup tables with their indexes
	scan                           time.Duration // the fastest of three plain scans
	scan1                          time.Duration // the same with one process (no parallel workers; PostgreSQL)
	report                         time.Duration // ReportWeek of the finished week from the minutes alone
	before                         cost          // the usage page of the week in progress, from the minutes alone
	roll                           time.Duration // the roll job catching up on every hour up to the page's now
	freeze                         time.Duration // the weekly send freezing the three weeks before
	page                           cost          // the week in progress: its week from rollups + minutes, trend from snapshots
	fourWeeks                      cost          // the same page with no snapshot: four weeks from rollups + minutes
	ended                          cost          // the just-ended week (not yet frozen): its week from rollups, trend from snapshots
	pages                          []latency     // every usage page through the router, week in progress
	same                           bool          // the page from snapshots has the figures of the four weeks computed
	sameAsMinutes                  bool          // ... and those of the page from the minutes alone (before the roll job)
	render                         time.Duration // building and rendering every user's email
	reports                        int
	peakHeap                       uint64 // sampled during the run
	maxRSS                         int64  // KiB, getrusage over the whole process
}

// measure times, as production gets there: the report and the usage page
// from the minutes alone (no roll job yet), the roll job catching up to
// the page's now, the weekly send freezing the three weeks before the
// benchmark's week (ReportWeekAt with freeze, oldest first), then the
// usage page of the week in progress, the same page computed over four
// weeks without snapshots, and the just-ended week after the job rolled
// its last hours.
func measure(ctx context.Context, db *store.DB, w models.Week) (result, error) {
	r := result{dialect: db.Dialect}
	g := db.Gorm.WithContext(ctx)
	g.Table("gpu_usage_minutes").Count(&r.minuteRows)
	g.Table("gpu_user_usage_minutes").Count(&r.userRows)
	g.Table("bookings").Count(&r.bookings)
	if db.Dialect == store.Postgres {
		// One backend, whose CPU time procCPU reads. (SQLite's writer
		// keeps a connection of its own: one in all would hang.)
		db.SQL.SetMaxOpenConns(1)
	}
	var err error
	if r.scan, err = plainScan(ctx, db, ""); err != nil {
		return r, err
	}
	if db.Dialect == store.Postgres {
		if r.scan1, err = plainScan(ctx, db, "SET LOCAL max_parallel_workers_per_gather = 0"); err != nil {
			return r, err
		}
	}
	stop := sampleHeap(&r.peakHeap)
	t0 := time.Now()
	d, err := db.ReportWeek(ctx, w, w.End, models.DefaultReportRules)
	if err != nil {
		return r, err
	}
	r.report = time.Since(t0)
	stop()
	bundle := i18n.MustLoad() // loaded once per process, as in the server
	t1 := time.Now()
	if r.reports, err = renderAll(d, bundle); err != nil {
		return r, err
	}
	r.render = time.Since(t1)
	rules := models.DefaultReportRules
	inProgress := func() (*models.WeekData, error) { return db.ReportWeekAt(ctx, w, pageAsOf(w), rules, false) }
	var fromMinutes, page, computedPage *models.WeekData
	if r.before, fromMinutes, err = timeView(ctx, db, inProgress); err != nil {
		return r, err
	}
	keep := time.Unix(0, 0)
	t2 := time.Now()
	if _, err := db.RollUsage(ctx, pageAsOf(w), keep, rules.BusyUtilPct); err != nil {
		return r, err
	}
	r.roll = time.Since(t2)
	g.Table("usage_hours").Count(&r.hourRows)
	g.Table("user_usage_hours").Count(&r.userHourRows)
	if db.Dialect == store.Postgres {
		g.Raw("SELECT pg_total_relation_size('usage_hours')").Scan(&r.hourBytes)
		g.Raw("SELECT pg_total_relation_size('user_usage_hours')").Scan(&r.userHourBytes)
	}
	t3 := time.Now()
	for k := models.TrendWeeks - 1; k >= 1; k-- {
		if _, err := db.ReportWeekAt(ctx, w.Prev(k), w.Start, rules, true); err != nil {
			return r, err
		}
	}
	r.freeze = time.Since(t3)
	if r.page, page, err = timeView(ctx, db, inProgress); err != nil {
		return r, err
	}
	computed := func() (*models.WeekData, error) { return db.ReportWeek(ctx, w, pageAsOf(w), rules) }
	if r.fourWeeks, computedPage, err = timeView(ctx, db, computed); err != nil {
		return r, err
	}
	if r.pages, err = timePages(ctx, db, pageAsOf(w)); err != nil {
		return r, err
	}
	r.same = figures(page) == figures(computedPage)
	r.sameAsMinutes = figures(page) == figures(fromMinutes)
	if _, err := db.RollUsage(ctx, endedAsOf(w), keep, rules.BusyUtilPct); err != nil {
		return r, err
	}
	ended := func() (*models.WeekData, error) { return db.ReportWeekAt(ctx, w, endedAsOf(w), rules, false) }
	if r.ended, _, err = timeView(ctx, db, ended); err != nil {
		return r, err
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	r.maxRSS = ru.Maxrss
	return r, nil
}

// figures is every figure of a week, printed, to compare two ways of
// computing it.
func figures(d *models.WeekData) string {
	return fmt.Sprint(d.ByUser, d.ClusterBusyMin, d.ClusterUnbookedMin, d.HourBusyMin, d.UsedBy)
}

// timeView times view: the best of 3 runs, then the CPU time of cpuRuns
// runs without parallel workers (PostgreSQL), averaged. It returns the
// week the last run read, for comparing the ways without running them again.
func timeView(ctx context.Context, db *store.DB, view func() (*models.WeekData, error)) (c cost, d *models.WeekData, err error) {
	for range 3 {
		t0 := time.Now()
		if d, err = view(); err != nil {
			return c, nil, err
		}
		if d := time.Since(t0); c.wall == 0 || d < c.wall {
			c.wall = d
		}
	}
	pg := db.Dialect == store.Postgres
	var pid int
	if pg {
		if err := db.Gorm.WithContext(ctx).Raw("SELECT pg_backend_pid()").Scan(&pid).Error; err != nil {
			return c, nil, err
		}
		if err := db.Gorm.WithContext(ctx).Exec("SET max_parallel_workers_per_gather = 0").Error; err != nil {
			return c, nil, err
		}
		defer db.Gorm.WithContext(ctx).Exec("RESET max_parallel_workers_per_gather")
	}
	client0 := selfCPU()
	server0, ok0 := procCPU(pid)
	for range cpuRuns {
		if d, err = view(); err != nil {
			return c, nil, err
		}
	}
	if pg {
		var again int
		if err := db.Gorm.WithContext(ctx).Raw("SELECT pg_backend_pid()").Scan(&again).Error; err != nil || again != pid {
			return c, nil, fmt.Errorf("reportbench: the backend changed (%d, %d) during the CPU runs: %v", pid, again, err)
		}
	}
	c.client = (selfCPU() - client0) / cpuRuns
	server1, ok1 := procCPU(pid)
	c.server, c.noServer = (server1-server0)/cpuRuns, !ok0 || !ok1
	return c, d, nil
}

// selfCPU is this process's user + system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is process pid's user + system time from /proc, in clock ticks
// of 10 ms (0 for pid 0: no server process); false when it cannot be read.
func procCPU(pid int) (time.Duration, bool) {
	if pid == 0 {
		return 0, true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// plainScan is the fastest of three SELECT count(*), sum(util_avg_pct)
// over the per-minute rows, after setup (e.g. no parallel workers).
func plainScan(ctx context.Context, db *store.DB, setup string) (time.Duration, error) {
	var best time.Duration
	for i := 0; i < 3; i++ {
		tx, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		if setup != "" {
			if _, err := tx.ExecContext(ctx, setup); err != nil {
				tx.Rollback()
				return 0, err
			}
		}
		t0 := time.Now()
		var n int64
		var sum float64
		err = tx.QueryRowContext(ctx, "SELECT count(*), sum(util_avg_pct) FROM gpu_usage_minutes").Scan(&n, &sum)
		d := time.Since(t0)
		tx.Rollback()
		if err != nil {
			return 0, err
		}
		if best == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// renderAll builds and renders every user's email, as the weekly run does
// (without the outbox writes).
func renderAll(d *models.WeekData, bundle *i18n.Bundle) (int, error) {
	links := views.ReportLinks{Web: "https://gpubook.example.org/usage", Preferences: "https://gpubook.example.org/profile#email",
		Definitions: "https://gpubook.example.org/usage/definitions"}
	for _, u := range d.Users {
		e := views.EmailEnv{T: bundle.For("en"), BaseURL: "https://gpubook.example.org", Location: time.UTC, Name: u.Name}
		if _, err := views.ReportEmail(e, views.ReportEmailData{Report: d.UserReport(u), Links: links}); err != nil {
			return 0, err
		}
	}
	return len(d.Users), nil
}

// sampleHeap records the peak HeapInuse every 5 ms until stopped.
func sampleHeap(peak *uint64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (r result) print(w io.Writer) {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	fmt.Fprintf(w, "%s: %d GPU-minutes, %d user-minutes, %d bookings\n", r.dialect, r.minuteRows, r.userRows, r.bookings)
	fmt.Fprintf(w, "plain scan (count, sum of util over gpu_usage_minutes), best of 3: %s", ms(r.scan))
	if r.scan1 > 0 {
		fmt.Fprintf(w, "; without parallel workers: %s", ms(r.scan1))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "from the minutes alone: report of the week %s; usage page (week in progress) %v\n", ms(r.report), r.before)
	fmt.Fprintf(w, "roll job catching up: %s (%d hourly GPU rows, %d hourly user rows; %.2f µs per GPU-minute)\n",
		ms(r.roll), r.hourRows, r.userHourRows, float64(r.roll.Microseconds())/float64(max(r.minuteRows, 1)))
	if r.hourBytes > 0 {
		fmt.Fprintf(w, "rollup storage with indexes: %.0f B per hourly GPU row, %.0f B per hourly user row\n",
			float64(r.hourBytes)/float64(max(r.hourRows, 1)), float64(r.userHourBytes)/float64(max(r.userHourRows, 1)))
	}
	fmt.Fprintf(w, "freezing the three weeks before (weekly send): %s\n", ms(r.freeze))
	fmt.Fprintf(w, "usage page, week in progress (rollups + snapshots): %v\n", r.page)
	fmt.Fprintf(w, "usage page, four weeks computed (rollups, no snapshot): %v\n", r.fourWeeks)
	fmt.Fprintf(w, "usage page, just-ended week (not frozen yet): %v\n", r.ended)
	for _, l := range r.pages {
		fmt.Fprintf(w, "usage page through the router, week in progress: %v\n", l)
	}
	fmt.Fprintf(w, "page from snapshots has the computed figures: %v; the figures from the minutes alone: %v\n", r.same, r.sameAsMinutes)
	fmt.Fprintf(w, "building and rendering %d reports: %s\n", r.reports, ms(r.render))
	fmt.Fprintf(w, "peak Go heap in use during the report: %.1f MiB; max RSS of the process: %.1f MiB\n", float64(r.peakHeap)/(1<<20), float64(r.maxRSS)/1024)
}
