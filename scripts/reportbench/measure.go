package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
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

type timing struct {
	report, page time.Duration // ReportWeek of the week; best of 3 of the week in progress
	busy         int64         // the cluster's busy minutes in the week
	figures      string        // every figure of the report, printed, to compare the two ways
}

type result struct {
	dialect                        string
	minuteRows, userRows, bookings int64
	hourRows, userHourRows         int64
	hourBytes, userHourBytes       int64         // PostgreSQL: the rollup tables with their indexes
	scan                           time.Duration // the fastest of three plain scans
	scan1                          time.Duration // the same with one process (no parallel workers; PostgreSQL)
	minutes, rolled                timing        // from the minutes alone; from the rollups and the minutes after them
	roll                           time.Duration // rolling every hour of the data once
	render                         time.Duration // building and rendering every user's email
	reports                        int
	peakHeap                       uint64 // sampled during the run
	maxRSS                         int64  // KiB, getrusage over the whole process
}

// measure times three plain scans, the report and the usage page from the
// minutes alone, the roll job catching up on every hour, then the report
// and the page again from the rollups.
func measure(ctx context.Context, db *store.DB, w models.Week) (result, error) {
	r := result{dialect: db.Dialect}
	g := db.Gorm.WithContext(ctx)
	g.Table("gpu_usage_minutes").Count(&r.minuteRows)
	g.Table("gpu_user_usage_minutes").Count(&r.userRows)
	g.Table("bookings").Count(&r.bookings)
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
	d, err := timeReports(ctx, db, w, &r.minutes)
	if err != nil {
		return r, err
	}
	bundle := i18n.MustLoad() // loaded once per process, as in the server
	t1 := time.Now()
	if r.reports, err = renderAll(d, bundle); err != nil {
		return r, err
	}
	r.render = time.Since(t1)
	t2 := time.Now()
	if _, err := db.RollUsage(ctx, w.End.Add(time.Hour), time.Time{}, models.DefaultReportRules.BusyUtilPct); err != nil {
		return r, err
	}
	r.roll = time.Since(t2)
	g.Table("usage_hours").Count(&r.hourRows)
	g.Table("user_usage_hours").Count(&r.userHourRows)
	if db.Dialect == store.Postgres {
		g.Raw("SELECT pg_total_relation_size('usage_hours')").Scan(&r.hourBytes)
		g.Raw("SELECT pg_total_relation_size('user_usage_hours')").Scan(&r.userHourBytes)
	}
	if _, err := timeReports(ctx, db, w, &r.rolled); err != nil {
		return r, err
	}
	stop()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	r.maxRSS = ru.Maxrss
	return r, nil
}

// timeReports times the week's report (once) and the usage page's
// ReportWeekAt of the week in progress (best of 3).
func timeReports(ctx context.Context, db *store.DB, w models.Week, t *timing) (*models.WeekData, error) {
	t0 := time.Now()
	d, err := db.ReportWeek(ctx, w, w.End, models.DefaultReportRules)
	if err != nil {
		return nil, err
	}
	t.report = time.Since(t0)
	for _, b := range d.ClusterBusyMin {
		t.busy += b
	}
	t.figures = fmt.Sprint(d.ByUser, d.ClusterBusyMin, d.ClusterUnbookedMin, d.HourBusyMin, d.UsedBy)
	for range 3 {
		t0 := time.Now()
		if _, err := db.ReportWeekAt(ctx, w, pageAsOf(w), models.DefaultReportRules, false); err != nil {
			return nil, err
		}
		if p := time.Since(t0); t.page == 0 || p < t.page {
			t.page = p
		}
	}
	return d, nil
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
	scans := func(d time.Duration) float64 { return float64(d) / float64(r.scan) }
	fmt.Fprintf(w, "%s: %d GPU-minutes, %d user-minutes, %d bookings\n", r.dialect, r.minuteRows, r.userRows, r.bookings)
	fmt.Fprintf(w, "plain scan (count, sum of util over gpu_usage_minutes), best of 3: %s", ms(r.scan))
	if r.scan1 > 0 {
		fmt.Fprintf(w, "; without parallel workers: %s", ms(r.scan1))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "from the minutes: report %s = %.2f scans; usage page (week in progress, best of 3) %s = %.2f scans\n",
		ms(r.minutes.report), scans(r.minutes.report), ms(r.minutes.page), scans(r.minutes.page))
	fmt.Fprintf(w, "rolling every hour once: %s (%d hourly GPU rows, %d hourly user rows; %.2f µs per GPU-minute)\n",
		ms(r.roll), r.hourRows, r.userHourRows, float64(r.roll.Microseconds())/float64(max(r.minuteRows, 1)))
	if r.hourBytes > 0 {
		fmt.Fprintf(w, "rollup storage with indexes: %.0f B per hourly GPU row, %.0f B per hourly user row\n",
			float64(r.hourBytes)/float64(max(r.hourRows, 1)), float64(r.userHourBytes)/float64(max(r.userHourRows, 1)))
	}
	fmt.Fprintf(w, "from the rollups: report %s = %.2f scans; usage page %s = %.2f scans\n",
		ms(r.rolled.report), scans(r.rolled.report), ms(r.rolled.page), scans(r.rolled.page))
	same := "yes"
	if r.minutes.figures != r.rolled.figures {
		same = fmt.Sprintf("NO (%d vs %d busy minutes)", r.minutes.busy, r.rolled.busy)
	}
	fmt.Fprintf(w, "same figures both ways: %s\n", same)
	fmt.Fprintf(w, "building and rendering %d reports: %s\n", r.reports, ms(r.render))
	fmt.Fprintf(w, "peak Go heap in use during the run: %.1f MiB; max RSS of the process: %.1f MiB\n", float64(r.peakHeap)/(1<<20), float64(r.maxRSS)/1024)
}
