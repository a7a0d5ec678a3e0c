package jobs_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// runFor runs the runners until stop returns true (or 10 s pass), then
// stops them and checks that Run returns cleanly.
func runFor(t *testing.T, stop func() bool, runners ...*jobs.Runner) {
	t.Helper()
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Go(func() {
			if err := r.Run(rctx); err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for !stop() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	wg.Wait()
}

// TestRunSendsMail: the scheduled worker sends what is enqueued and Run
// returns when its context ends.
func TestRunSendsMail(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	srv := smtptest.Start(t, smtptest.Options{})
	r := newRunner(t, db, clockwork.NewRealClock(), nil)
	m, err := mail.New(mail.Settings{Host: "127.0.0.1", Port: srv.Port, From: "gpubook@example.org", TLS: mail.TLSNone, Timeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	outbox, err := mail.NewOutbox(mail.OutboxConfig{Store: db, Sender: m, Logger: quiet(), Owner: r.Owner()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterEverywhere("outbox", 50*time.Millisecond, outbox.Deliver); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := range 3 {
		key := fmt.Sprintf("test:%d", i)
		msg := models.OutboxMessage{Kind: "test", DedupKey: key, ToEmail: "user@example.org", Subject: key, TextBody: key,
			NextAttemptAt: now.Add(-time.Second), CreatedAt: now}
		if _, err := db.EnqueueMail(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	runFor(t, func() bool { return len(srv.Messages()) >= 3 }, r)
	if got := len(srv.Wait(3, 5*time.Second)); got != 3 {
		t.Errorf("server received %d messages, want 3", got)
	}
}

// TestRegisterPeriodicOncePerPeriod: two processes check every 20 ms for
// the due period; each period runs once, the first at start-up (catch-up).
func TestRegisterPeriodicOncePerPeriod(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			url := storetest.MigratedURL(t, dialect)
			dbs := [2]*store.DB{storetest.OpenURL(t, url), storetest.OpenURL(t, url)}
			var period atomic.Value
			period.Store("2026-W49")
			var mu sync.Mutex
			runs := map[string]int{}
			var runners []*jobs.Runner
			for _, db := range dbs {
				r := newRunner(t, db, clockwork.NewRealClock(), func(c *jobs.Config) { c.PeriodCheck = 20 * time.Millisecond })
				err := r.RegisterPeriodic("report", func(time.Time) string { return period.Load().(string) },
					func(_ context.Context, p string) error {
						mu.Lock()
						runs[p]++
						mu.Unlock()
						time.Sleep(30 * time.Millisecond)
						return nil
					})
				if err != nil {
					t.Fatal(err)
				}
				runners = append(runners, r)
			}
			checks := 0
			runFor(t, func() bool {
				checks++
				if checks == 15 {
					period.Store("2026-W50")
				}
				return checks > 30
			}, runners...)
			if runs["2026-W49"] != 1 || runs["2026-W50"] != 1 || len(runs) != 2 {
				t.Errorf("runs %v; want each period once", runs)
			}
		})
	}
}

// TestRegisterHoldsTheLease: a lease-guarded job never runs in two
// processes at once.
func TestRegisterHoldsTheLease(t *testing.T) {
	url := storetest.MigratedURL(t, store.Postgres)
	dbs := [2]*store.DB{storetest.OpenURL(t, url), storetest.OpenURL(t, url)}
	var running, most, total atomic.Int32
	var runners []*jobs.Runner
	for _, db := range dbs {
		r := newRunner(t, db, clockwork.NewRealClock(), nil)
		err := r.Register("sweep", 10*time.Millisecond, func(context.Context) error {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			total.Add(1)
			time.Sleep(40 * time.Millisecond)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		runners = append(runners, r)
	}
	runFor(t, func() bool { return total.Load() >= 8 }, runners...)
	if most.Load() != 1 || total.Load() < 8 {
		t.Errorf("at most %d at once over %d runs; want 1", most.Load(), total.Load())
	}
}

func TestWeeklyPeriod(t *testing.T) {
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	monday8 := jobs.WeeklyPeriod(shanghai, time.Monday, 8, 0)
	tests := []struct {
		f    func(time.Time) string
		now  time.Time
		want string
	}{
		{monday8, time.Date(2026, 12, 7, 7, 59, 0, 0, shanghai), "2026-W49"},
		{monday8, time.Date(2026, 12, 7, 8, 0, 0, 0, shanghai), "2026-W50"},
		{monday8, time.Date(2026, 12, 13, 23, 59, 0, 0, shanghai), "2026-W50"},
		{monday8, time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC), "2026-W50"}, // 08:00 in Shanghai
		{monday8, time.Date(2027, 1, 3, 12, 0, 0, 0, shanghai), "2026-W53"},
		{monday8, time.Date(2027, 1, 4, 9, 0, 0, 0, shanghai), "2027-W01"},
		// the Monday after Berlin's spring change: still 08:00 local
		{jobs.WeeklyPeriod(berlin, time.Monday, 8, 0), time.Date(2026, 3, 30, 6, 0, 0, 0, time.UTC), "2026-W14"},
		{jobs.WeeklyPeriod(berlin, time.Monday, 8, 0), time.Date(2026, 3, 30, 5, 59, 0, 0, time.UTC), "2026-W13"},
		{jobs.DailyPeriod(shanghai, 2, 0), time.Date(2026, 12, 7, 1, 0, 0, 0, shanghai), "2026-12-06"},
		{jobs.DailyPeriod(shanghai, 2, 0), time.Date(2026, 12, 7, 2, 0, 0, 0, shanghai), "2026-12-07"},
	}
	for _, tt := range tests {
		if got := tt.f(tt.now); got != tt.want {
			t.Errorf("%v: got %s, want %s", tt.now, got, tt.want)
		}
	}
}
