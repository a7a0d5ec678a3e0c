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

// benchWeek is the generated week: 2026-W49, in UTC.
func benchWeek() models.Week {
	w, _ := models.ParseWeek("2026-W49", time.UTC)
	return w
}

type result struct {
	minuteRows, userRows, bookings int64
	scan                           time.Duration // the fastest of three plain scans
	scan1                          time.Duration // the same with one process (no parallel workers)
	queries, render                time.Duration // ReportWeek; building and rendering 500 emails
	reports                        int
	peakHeap                       uint64 // sampled during the run
	maxRSS                         int64  // KiB, getrusage over the whole process
}

// measure times three plain scans, then one whole report run.
func measure(ctx context.Context, db *store.DB, w models.Week) (result, error) {
	var r result
	g := db.Gorm.WithContext(ctx)
	g.Table("gpu_usage_minutes").Count(&r.minuteRows)
	g.Table("gpu_user_usage_minutes").Count(&r.userRows)
	g.Table("bookings").Count(&r.bookings)
	var err error
	if r.scan, err = plainScan(ctx, db, ""); err != nil {
		return r, err
	}
	if r.scan1, err = plainScan(ctx, db, "SET LOCAL max_parallel_workers_per_gather = 0"); err != nil {
		return r, err
	}
	stop := sampleHeap(&r.peakHeap)
	t0 := time.Now()
	d, err := db.ReportWeek(ctx, w, w.End, models.DefaultReportRules)
	if err != nil {
		return r, err
	}
	r.queries = time.Since(t0)
	bundle := i18n.MustLoad() // loaded once per process, as in the server
	t1 := time.Now()
	if r.reports, err = renderAll(d, bundle); err != nil {
		return r, err
	}
	r.render = time.Since(t1)
	stop()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	r.maxRSS = ru.Maxrss
	return r, nil
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
	fmt.Fprintf(w, "rows: %d GPU-minutes, %d user-minutes, %d bookings\n", r.minuteRows, r.userRows, r.bookings)
	fmt.Fprintf(w, "plain scan (count, sum of util over gpu_usage_minutes), best of 3: %v; without parallel workers: %v\n",
		r.scan.Round(time.Millisecond), r.scan1.Round(time.Millisecond))
	fmt.Fprintf(w, "report queries (ReportWeek, all users): %v = %.1f scans\n", r.queries.Round(time.Millisecond), float64(r.queries)/float64(r.scan))
	fmt.Fprintf(w, "building and rendering %d reports: %v\n", r.reports, r.render.Round(time.Millisecond))
	total := r.queries + r.render
	fmt.Fprintf(w, "whole run: %v = %.1f parallel scans = %.1f single-process scans\n", total.Round(time.Millisecond),
		float64(total)/float64(r.scan), float64(total)/float64(r.scan1))
	fmt.Fprintf(w, "peak Go heap in use during the run: %.1f MiB; max RSS of the process: %.1f MiB\n", float64(r.peakHeap)/(1<<20), float64(r.maxRSS)/1024)
}
