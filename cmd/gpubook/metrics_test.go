package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
)

// TestMetrics runs "gpubook serve" with GPUBOOK_METRICS_LISTEN, scrapes
// /metrics before and after a scripted session (a browser sign-in, two
// bookings and a release through the API, a priority request, an agent's
// usage sent twice, a 404), parses each scrape with Prometheus's text
// parser and checks that the counters moved by exactly the session's
// requests and that the gauges say what the database holds.
func TestMetrics(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			testMetrics(t, d)
		})
	}
}

func testMetrics(t *testing.T, dialect string) {
	ctx := context.Background()
	dbURL := storetest.MigratedURL(t, dialect)
	base, _, stop, stderr := serveInBackground(t, map[string]string{"GPUBOOK_DATABASE_URL": dbURL,
		"GPUBOOK_LOG_FORMAT": "json", "GPUBOOK_METRICS_LISTEN": "127.0.0.1:0"})
	defer stop()
	metricsURL := "http://" + logged(t, stderr, "metrics listening", "addr") + "/metrics"
	// The portal itself does not serve /metrics: it may be public.
	if resp, err := http.Get(base + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET %s/metrics = %v, %v; want 404", base, resp.StatusCode, err)
	}

	db := storetest.OpenURL(t, dbURL)
	gpus, _ := models.NewNodeGPUs("gpu01", 2, "NVIDIA A100-SXM4-80GB", 81920)
	node := &models.Node{Name: "gpu01"}
	if err := db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	stored, err := db.GPUs(ctx)
	if err != nil || len(stored) != 2 {
		t.Fatalf("gpus %v, %v", stored, err)
	}
	old := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	if _, err := db.EnqueueMail(ctx, models.OutboxMessage{Kind: "test", DedupKey: "metrics-test", ToEmail: "a@example.org",
		Subject: "s", TextBody: "b", NextAttemptAt: time.Now().Add(24 * time.Hour), CreatedAt: old}); err != nil {
		t.Fatal(err)
	}

	before := scrape(t, metricsURL)
	browserSignIn(t, base, "ada@example.org", "Ada")
	ada, err := db.UserByEmail(ctx, "ada@example.org")
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := db.CreateToken(ctx, ada.ID, "metrics", time.Now(), models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	api := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		var r io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, r)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out := map[string]any{}
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want {
			t.Fatalf("%s %s = %d, want %d: %v", method, path, resp.StatusCode, want, out)
		}
		return out
	}
	now := time.Now().UTC().Truncate(time.Second)
	ids := []int64{stored[0].ID}
	b := api("POST", "/api/v1/bookings", map[string]any{"gpu_ids": ids, "starts_at": now.Add(-2 * time.Minute), "ends_at": now.Add(time.Hour)}, 201)
	// Released after its first second, so that it ends (a release within
	// the first second cancels it instead, which holds nothing).
	start, _ := time.Parse(time.RFC3339, fmt.Sprint(b["starts_at"]))
	time.Sleep(time.Until(start.Add(1100 * time.Millisecond)))
	api("POST", fmt.Sprintf("/api/v1/bookings/%v/release", b["id"]), nil, 200)
	later := now.Truncate(time.Hour).Add(3 * time.Hour)
	api("POST", "/api/v1/bookings", map[string]any{"gpu_ids": ids, "starts_at": later, "ends_at": later.Add(time.Hour)}, 201)
	api("POST", "/api/v1/requests", map[string]any{"gpu_ids": []int64{stored[1].ID}, "starts_at": later, "ends_at": later.Add(time.Hour),
		"purpose": "deadline", "urgency": "camera-ready", "plan": "fine-tune", "give_back": "after"}, 201)
	api("GET", "/api/v1/bookings/7/nothing-here", nil, 404)

	enroll, _, err := db.CreateEnrollToken(ctx, node.ID, time.Now(), models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := client.New(base, "", "test").Enroll(ctx, wire.EnrollRequest{Token: enroll})
	if err != nil {
		t.Fatal(err)
	}
	agent := client.New(base, cred.Credential, "test")
	minute := time.Now().UTC().Truncate(time.Minute).Add(-5 * time.Minute)
	pct := 40.0
	batch := wire.UsageBatch{Node: "gpu01", BatchID: "1"}
	for _, g := range stored {
		batch.Records = append(batch.Records, wire.UsageRecord{GPUUUID: g.UUID, Minute: minute, UtilAvgPct: &pct, UtilMaxPct: &pct,
			MemUsedMiB: 100, MemTotalMiB: 81920, Samples: 6})
	}
	for range 2 { // the second is a resend: duplicates, not new records
		if err := agent.PostJSON(ctx, wire.PathUsage, batch); err != nil {
			t.Fatalf("post usage: %v", err)
		}
	}

	after := scrapeUntil(t, metricsURL, func(f families) bool {
		return f.value("gpubook_job_last_run_timestamp_seconds", "task", "usage-retention") > 0
	})
	delta := func(name string, labels ...string) float64 {
		return after.value(name, labels...) - before.value(name, labels...)
	}
	counters := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"gpubook_http_requests_total", []string{"method", "POST", "route", "/login/dev", "status", "303"}, 1},
		{"gpubook_http_requests_total", []string{"method", "GET", "route", "/login", "status", "200"}, 1},
		{"gpubook_http_requests_total", []string{"method", "POST", "route", "/api/v1/bookings", "status", "201"}, 2},
		{"gpubook_http_requests_total", []string{"method", "POST", "route", "/api/v1/bookings/:id/release", "status", "200"}, 1},
		{"gpubook_http_requests_total", []string{"method", "POST", "route", "/api/v1/requests", "status", "201"}, 1},
		{"gpubook_http_requests_total", []string{"method", "POST", "route", wire.PathUsage, "status", "204"}, 2},
		{"gpubook_http_requests_total", []string{"method", "POST", "route", wire.PathEnroll, "status", "200"}, 1},
		{"gpubook_http_requests_total", []string{"method", "GET", "route", "/api/v1/*", "status", "404"}, 1}, // an unknown path: its catch-all
		{"gpubook_http_request_duration_seconds", []string{"method", "POST", "route", "/api/v1/bookings"}, 2},
		{"gpubook_agent_usage_records_total", []string{"result", "inserted"}, 2},
		{"gpubook_agent_usage_records_total", []string{"result", "duplicate"}, 2},
		{"gpubook_agent_usage_records_total", []string{"result", "stale"}, 0},
	}
	for _, c := range counters {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Routes are templates: no series names a booking ID or a raw path.
	for _, m := range after["gpubook_http_requests_total"].GetMetric() {
		if r := label(m, "route"); regexp.MustCompile(`/\d`).MatchString(r) || strings.Contains(r, "nothing-here") {
			t.Errorf("route label %q is a raw URL", r)
		}
	}
	gauges := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"gpubook_metrics_database_up", nil, 1},
		{"gpubook_bookings", []string{"phase", "past"}, 1},
		{"gpubook_bookings", []string{"phase", "upcoming"}, 1},
		{"gpubook_bookings", []string{"phase", "active"}, 0},
		{"gpubook_bookings", []string{"phase", "cancelled"}, 0},
		{"gpubook_priority_requests", []string{"status", "pending"}, 1},
		{"gpubook_priority_requests", []string{"status", "approved"}, 0},
		{"gpubook_agents", []string{"state", "online"}, 1},
		{"gpubook_agents", []string{"state", "offline"}, 0},
		{"gpubook_job_last_run_success", []string{"task", "usage-retention"}, 1},
	}
	for _, g := range gauges {
		if got := after.value(g.name, g.labels...); got != g.want {
			t.Errorf("%s%v = %v, want %v", g.name, g.labels, got, g.want)
		}
	}
	// The outbox as the store counts it (the session's notices join the test's message).
	ob, err := db.OutboxStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range models.OutboxStatuses {
		if got := after.value("gpubook_outbox_messages", "status", s); got != float64(ob.Counts[s]) {
			t.Errorf("gpubook_outbox_messages{status=%q} = %v, the store counts %d", s, got, ob.Counts[s])
		}
	}
	if ob.Counts[models.OutboxPending] < 1 {
		t.Errorf("the test's pending message is not counted: %v", ob.Counts)
	}
	if age := after.value("gpubook_outbox_oldest_pending_age_seconds"); age < 3600 || age > 3600+120 {
		t.Errorf("oldest pending age %v s, want about 3600", age)
	}
	if before.value("gpubook_agents", "state", "online") != 0 || before.value("gpubook_bookings", "phase", "past") != 0 {
		t.Errorf("before the session: agents %v, past bookings %v; want 0", before.value("gpubook_agents", "state", "online"), before.value("gpubook_bookings", "phase", "past"))
	}
	checkAlertSelectors(t, after)
	if after["go_goroutines"] == nil || after["process_start_time_seconds"] == nil {
		t.Error("no Go runtime or process series")
	}
}

// families is one parsed scrape.
type families map[string]*dto.MetricFamily

// value is the sample of name whose labels include the given name, value
// pairs (a histogram's count); 0 when there is none.
func (f families) value(name string, kv ...string) float64 {
	fam := f[name]
	if fam == nil {
		return 0
	}
next:
	for _, m := range fam.GetMetric() {
		for i := 0; i+1 < len(kv); i += 2 {
			if label(m, kv[i]) != kv[i+1] {
				continue next
			}
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// scrape fetches and parses one exposition; the parser refuses anything
// Prometheus would.
func scrape(t *testing.T, u string) families {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d", u, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", u, err)
	}
	return fams
}

// scrapeUntil scrapes until ok (background jobs run once at start-up, a
// moment after the server answers), for at most 20 seconds.
func scrapeUntil(t *testing.T, u string, ok func(families) bool) families {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		f := scrape(t, u)
		if ok(f) || time.Now().After(end) {
			return f
		}
	}
}

// logged waits for the JSON log line with msg and returns its attribute.
func logged(t *testing.T, log *syncBuffer, msg, attr string) string {
	t.Helper()
	for _, line := range strings.Split(log.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			if v, ok := rec[attr].(string); ok {
				return v
			}
		}
	}
	t.Fatalf("no %q log line with %s:\n%s", msg, attr, log)
	return ""
}

// browserSignIn signs in through the development sign-in over HTTP as a
// browser does: the sign-in page's CSRF token, then the form.
func browserSignIn(t *testing.T, base, email, name string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on /login:\n%s", page)
	}
	resp, err = c.PostForm(base+"/login/dev", url.Values{"email": {email}, "name": {name}, "_csrf": {string(m[1])}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d", resp.StatusCode)
	}
}
