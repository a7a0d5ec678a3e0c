package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// BenchmarkCalendarWeek renders the week view of 64 GPUs (8 nodes × 8) with
// 3,000 bookings in the week, and of 512 GPUs with as many bookings per GPU
// (24,000; the view opens with its nodes collapsed, and once more with
// every node open and once filtered to one node), and reports p50/p99
// server time, the SQL time and queries per render (GORM callbacks), and
// the bytes sent (plain and gzip).
//
//	go test -run '^$' -bench BenchmarkCalendarWeek -benchtime 100x ./web/
func BenchmarkCalendarWeek(b *testing.B) {
	for _, c := range []struct {
		gpus, bookings int
		queries        []string
	}{
		{64, 0, []string{""}},
		{64, 3000, []string{""}},
		{512, 24000, []string{"", "&node=3", "&open=all"}},
	} {
		// The fixture is built once per size: 24,000 bookings take a while.
		b.Run(fmt.Sprintf("gpus=%d/bookings=%d", c.gpus, c.bookings), func(b *testing.B) {
			f, m := weekFixture(b, c.gpus, c.bookings)
			for _, q := range c.queries {
				b.Run("q="+q, func(b *testing.B) { benchWeek(b, f, m, q, c.gpus, c.bookings) })
			}
		})
	}
}

// weekFixture fills the week of 1 June 2026 evenly: each GPU's bookings
// take two thirds of its share of the week, alternately Alice's and Bob's.
func weekFixture(b *testing.B, size, bookings int) (*calFixture, *sqlMeter) {
	f := newCalFixture(b, store.SQLite)
	ctx := context.Background()
	for i := 0; len(f.nodes) < size/8+1; i++ { // with node-a (4) and node-b (2) from the fixture: 6 + 8k + 2
		f.addNode(b, fmt.Sprintf("bench-%03d", i), 8, "NVIDIA A100-SXM4-80GB", 81920)
	}
	f.addNode(b, "bench-last", 2, "NVIDIA A100-SXM4-80GB", 81920)
	var gpus []int64
	for _, n := range f.nodes {
		for _, g := range n.GPUs {
			gpus = append(gpus, g.ID)
		}
	}
	monday := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	per := bookings / len(gpus)
	for i, g := range gpus {
		count := per
		if i < bookings%len(gpus) {
			count++
		}
		slot := 7 * 24 * time.Hour / time.Duration(max(count, 1))
		for k := 0; k < count; k++ {
			start := monday.Add(time.Duration(k) * slot)
			_, err := f.env.DB.CreateBooking(ctx, models.NewBooking{UserID: []int64{f.alice.ID, f.bob.ID}[k%2], GPUIDs: []int64{g},
				StartsAt: start, EndsAt: start.Add(slot * 2 / 3), Note: "benchmark run"}, models.DefaultBookingLimits, start, models.CLIActor)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	m := &sqlMeter{}
	start := func(db *gorm.DB) { db.InstanceSet("bench:t0", time.Now()) }
	done := func(db *gorm.DB) {
		m.queries.Add(1)
		if t0, ok := db.InstanceGet("bench:t0"); ok {
			m.time.Add(int64(time.Since(t0.(time.Time))))
		}
	}
	g := f.env.DB.Gorm.Callback()
	_ = g.Query().Before("gorm:query").Register("bench:start", start)
	_ = g.Raw().Before("gorm:raw").Register("bench:start", start)
	_ = g.Row().Before("gorm:row").Register("bench:start", start)
	_ = g.Query().After("gorm:query").Register("bench:count", done) // before preloads: they are queries of their own
	_ = g.Raw().After("gorm:raw").Register("bench:count", done)
	_ = g.Row().After("gorm:row").Register("bench:count", done)
	return f, m
}

// sqlMeter counts the SQL statements and the time spent in them.
type sqlMeter struct{ queries, time atomic.Int64 }

// benchWeek renders the week view with the extra query and reports the figures.
func benchWeek(b *testing.B, f *calFixture, m *sqlMeter, query string, gpus, bookings int) {
	c := f.signedIn(f.alice)
	req := func(gzip bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/calendar?date=2026-06-03"+query, nil)
		if gzip {
			r.Header.Set("Accept-Encoding", "gzip")
		}
		res := c.Do(r)
		if res.Code != http.StatusOK {
			b.Fatalf("status %d", res.Code)
		}
		return res.ResponseRecorder
	}
	first := req(false)
	if p := os.Getenv("GPUBOOK_BENCH_HTML"); p != "" {
		_ = os.WriteFile(p, first.Body.Bytes(), 0o644)
	}
	plain, zipped := first.Body.Len(), req(true).Body.Len()
	times := make([]time.Duration, 0, b.N)
	m.queries.Store(0)
	m.time.Store(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		req(true)
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(plain), "html-bytes")
	b.ReportMetric(float64(zipped), "gzip-bytes")
	b.ReportMetric(float64(m.queries.Load())/float64(b.N), "queries/op")
	b.ReportMetric(float64(m.time.Load())/float64(b.N)/1e6, "sql-ms/op")
	b.ReportMetric(float64(bookings), "bookings")
	b.ReportMetric(float64(gpus), "gpus")
}
