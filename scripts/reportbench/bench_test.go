package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/views/i18n"
)

// BenchmarkReportWeek is the report run on the generated week. It needs
// PostgreSQL on 127.0.0.1 and GPUBOOK_BENCH_PG=1 (generating the week takes
// a minute), so the default go test ./... never runs it.
func BenchmarkReportWeek(b *testing.B) {
	if os.Getenv("GPUBOOK_BENCH_PG") != "1" {
		b.Skip("set GPUBOOK_BENCH_PG=1 to run (PostgreSQL on 127.0.0.1)")
	}
	if u, err := url.Parse(storetest.AdminURL()); err != nil || u.Hostname() != "127.0.0.1" {
		b.Fatalf("the benchmark runs against 127.0.0.1 only, not %q", storetest.AdminURL())
	}
	db := storetest.Open(b, store.Postgres) // a fresh database, dropped afterwards
	ctx := context.Background()
	w := benchWeek()
	if err := fill(ctx, db, newShape(gpus, gpus*weekMinutes, w.End, false)); err != nil {
		b.Fatal(err)
	}
	bundle := i18n.MustLoad()
	b.ResetTimer()
	for b.Loop() {
		d, err := db.ReportWeek(ctx, w, w.End, models.DefaultReportRules)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := renderAll(d, bundle); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGeneratedStamps: the stamps the generator writes with the rows are
// the ones the store computes (store.RestampUsage), in time order and not,
// on both databases; so the benchmark measures data the store could have
// written.
func TestGeneratedStamps(t *testing.T) {
	for _, unordered := range []bool{false, true} {
		// Named subtests: a repeated name gets "#01", and a '#' in the
		// SQLite file's path ends the path there.
		t.Run(fmt.Sprint("unordered=", unordered), func(t *testing.T) {
			t.Parallel()
			generatedStamps(t, unordered)
		})
	}
}

func generatedStamps(t *testing.T, unordered bool) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		// One node for four cycles: each GPU's fourth booking is the one
		// released early (data.go), each cycle has its owner's and an
		// intruder's minutes.
		sh := shape{gpus: gpusPerNode, span: 4 * cycle, end: benchWeek().End, unordered: unordered}
		if err := fill(ctx, db, sh); err != nil {
			t.Fatal(err)
		}
		before := stamps(t, db)
		if err := db.RestampUsage(ctx, sh.start(), sh.end); err != nil {
			t.Fatal(err)
		}
		after := stamps(t, db)
		if want := sh.gpus*sh.span + sh.gpus*sh.slots()*230; len(before) != want {
			t.Errorf("%d rows, want %d", len(before), want)
		}
		for k, v := range after {
			if before[k] != v {
				t.Errorf("%s: generated %q, store %q", k, before[k], v)
				break
			}
		}
	})
}

// stamps reads every row's stamps, keyed by the row.
func stamps(t *testing.T, db *store.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	rows, err := db.SQL.Query(`SELECT gpu_id, unix_minute, COALESCE(booking_id, 0), booker_mem_mib, top_mem_mib FROM gpu_usage_minutes`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var g, m, b, bm, tm int64
		if err := rows.Scan(&g, &m, &b, &bm, &tm); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprint("m", g, "/", m)] = fmt.Sprint(b, " ", bm, " ", tm)
	}
	rows.Close()
	rows, err = db.SQL.Query(`SELECT gpu_id, minute, user_name, booked FROM gpu_user_usage_minutes`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var g int64
		var m time.Time
		var u string
		var booked bool
		if err := rows.Scan(&g, &m, &u, &booked); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprint("u", g, "/", m.Unix(), "/", u)] = fmt.Sprint(booked)
	}
	return out
}
