package main

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestOutboxFailureInMetrics: "gpubook serve" against an SMTP server that
// accepts connections and never greets reports the outbox job failed in
// /metrics, and tries one message of the batch, not each of them. Every
// query of the Grafana dashboard is checked against the same scrape.
func TestOutboxFailureInMetrics(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept, hold, say nothing
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	url := storetest.MigratedURL(t, store.SQLite)
	db := storetest.OpenURL(t, url)
	for i := range 3 {
		if _, err := db.EnqueueMail(ctx, models.OutboxMessage{Kind: "test", DedupKey: fmt.Sprintf("silent:%d", i),
			ToEmail: "a@example.org", Subject: "s", TextBody: "b"}); err != nil {
			t.Fatal(err)
		}
	}
	env := smtpEnv(url, ln.Addr().(*net.TCPAddr).Port)
	env["GPUBOOK_SMTP_TIMEOUT"], env["GPUBOOK_LOG_FORMAT"], env["GPUBOOK_METRICS_LISTEN"] = "1s", "json", "127.0.0.1:0"
	env["GPUBOOK_LISTEN"] = "127.0.0.1:0"
	base, _, stop, stderr := serveInBackground(t, env)
	defer stop()
	if resp, err := http.Get(base + "/login"); err == nil { // the request series, for the dashboard
		resp.Body.Close()
	}
	metricsURL := "http://" + logged(t, stderr, "metrics listening", "addr") + "/metrics"
	start := time.Now()
	f := scrapeUntil(t, metricsURL, func(f families) bool {
		return f.value("gpubook_job_runs_total", "task", "outbox", "outcome", "failed") >= 1
	})
	if got := f.value("gpubook_job_runs_total", "task", "outbox", "outcome", "failed"); got < 1 {
		t.Fatalf("outbox failed runs = %v after %s, want at least 1; ok runs %v", got, time.Since(start),
			f.value("gpubook_job_runs_total", "task", "outbox", "outcome", "ok"))
	}
	if got := f.value("gpubook_job_last_run_success", "task", "outbox"); got != 0 {
		t.Errorf("outbox last run success = %v, want 0", got)
	}
	checkDashboard(t, f)
	var attempts int64
	if err := db.Gorm.Raw("SELECT COALESCE(SUM(attempts), 0) FROM outbox").Scan(&attempts).Error; err != nil || attempts != 1 {
		t.Errorf("attempts %d, %v; want 1 (the rest released while the server is backed off)", attempts, err)
	}
}
