package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// BenchmarkCalendarWeek renders the week view of 64 GPUs (8 nodes × 8) with
// 3,000 bookings in the week, and reports p50/p99 server time, bytes sent
// (plain and gzip) and SQL queries per render (counted with a GORM callback).
//
//	go test -run '^$' -bench BenchmarkCalendarWeek -benchtime 200x ./web/
func BenchmarkCalendarWeek(b *testing.B) {
	for _, n := range []int{0, 3000} {
		b.Run(map[int]string{0: "bookings=0", 3000: "bookings=3000"}[n], func(b *testing.B) { benchWeek(b, n) })
	}
}

func benchWeek(b *testing.B, bookings int) {
	f := newCalFixture(b, store.SQLite)
	ctx := context.Background()
	for i := 0; i < 7; i++ { // with node-a (4) and node-b (2) from the fixture: 62 + …
		f.addNode(b, "bench-"+string(rune('a'+i)), 8, "NVIDIA A100-SXM4-80GB", 81920)
	}
	f.addNode(b, "bench-h", 2, "NVIDIA A100-SXM4-80GB", 81920) // … = 64 GPUs
	var gpus []int64
	for _, n := range f.nodes {
		for _, g := range n.GPUs {
			gpus = append(gpus, g.ID)
		}
	}
	monday := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	per := bookings / len(gpus)
	made := 0
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
			made++
		}
	}
	c := f.signedIn(f.alice)
	var queries atomic.Int64
	cb := func(*gorm.DB) { queries.Add(1) }
	g := f.env.DB.Gorm.Callback()
	_ = g.Query().After("gorm:query").Register("bench:count", cb)
	_ = g.Raw().After("gorm:raw").Register("bench:count", cb)
	_ = g.Row().After("gorm:row").Register("bench:count", cb)
	req := func(gzip bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/calendar?date=2026-06-03", nil)
		if gzip {
			r.Header.Set("Accept-Encoding", "gzip")
		}
		res := c.Do(r)
		if res.Code != http.StatusOK {
			b.Fatalf("status %d", res.Code)
		}
		return res.ResponseRecorder
	}
	plain, zipped := req(false).Body.Len(), req(true).Body.Len()
	times := make([]time.Duration, 0, b.N)
	queries.Store(0)
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
	b.ReportMetric(float64(queries.Load())/float64(b.N), "queries/op")
	b.ReportMetric(float64(made), "bookings")
	b.ReportMetric(float64(len(gpus)), "gpus")
}
