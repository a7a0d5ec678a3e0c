package main

import (
	"context"
	"net/url"
	"os"
	"testing"

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
	if err := fill(ctx, db, w.Start); err != nil {
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
