package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// serveInBackground starts "gpubook serve" on a free port and returns its
// base URL, the error channel and the function that stops it.
func serveInBackground(t *testing.T, env map[string]string, args ...string) (base string, done <-chan error, stop func(), stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	stderr = &syncBuffer{}
	go func() {
		errc <- runWith(ctx, append([]string{"gpubook", "serve", "--listen", "127.0.0.1:0"}, args...), envOf(env), &syncBuffer{}, stderr, ready)
	}()
	select {
	case addr := <-ready:
		t.Cleanup(cancel)
		return "http://" + addr.String(), errc, cancel, stderr
	case err := <-errc:
		cancel()
		t.Fatalf("serve stopped before listening: %v\n%s", err, stderr)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatalf("serve did not start:\n%s", stderr)
	}
	return "", nil, nil, nil
}

func TestServe(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	base, done, stop, stderr := serveInBackground(t, map[string]string{"GPUBOOK_DATABASE_URL": url, "GPUBOOK_LOG_FORMAT": "json"})
	for _, path := range []string{"/healthz", "/readyz", "/login"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", path, resp.StatusCode)
		}
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after cancel = %v, want nil (graceful shutdown)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
	// The log is JSON as asked, and names each applied migration.
	applied := 0
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["msg"] == "applied migration" && rec["version"] != nil {
			applied++
		}
	}
	if applied == 0 {
		t.Errorf("no applied migration logged:\n%s", stderr)
	}
	// The schema is current, so --no-migrate starts too.
	_, done, stop, _ = serveInBackground(t, map[string]string{"GPUBOOK_DATABASE_URL": url}, "--no-migrate")
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve --no-migrate on a current schema: %v", err)
	}
}

func TestServeNoMigrateRefusesPending(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	err := run(ctx, []string{"gpubook", "serve", "--no-migrate", "--listen", "127.0.0.1:0"}, envOf(map[string]string{"GPUBOOK_DATABASE_URL": url}), &syncBuffer{}, &syncBuffer{})
	if err == nil || !strings.Contains(err.Error(), "pending and --no-migrate given; run 'gpubook migrate up' first") {
		t.Errorf("serve --no-migrate on an empty database: %v", err)
	}
}

func TestServePostgres(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.Postgres)
	base, done, stop, _ := serveInBackground(t, map[string]string{"GPUBOOK_DATABASE_URL": url})
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /readyz = %d", resp.StatusCode)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}
