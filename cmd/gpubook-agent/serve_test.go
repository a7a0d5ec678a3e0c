package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/models/wire"
)

// TestServeWiring runs the daemon as `run` wires it, on the simulated GPUs,
// against a stub portal, and checks the cache, the status file and /metrics.
func TestServeWiring(t *testing.T) {
	node := agenttest.NewNode(t)
	var mu sync.Mutex
	seen := map[string]int{}
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == wire.PathSchedule {
			w.Header().Set("ETag", `"1"`)
			_ = json.NewEncoder(w).Encode(wire.Schedule{Node: "gpu01", Bookings: []wire.Booking{
				{ID: 1, User: "alice", GPUUUIDs: []string{node.UUID(0)}, StartsAt: time.Now(), EndsAt: time.Now().Add(time.Hour)}}})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer portal.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // find a free port for /metrics
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cfg := defaultConfig()
	cfg.StateDir, cfg.CacheFile, cfg.MetricsAddr, cfg.Node = dir, filepath.Join(dir, "schedule.json"), addr, "gpu01"
	cfg.PortalURL = portal.URL
	cfg.SampleInterval, cfg.SyncInterval, cfg.DeliverInterval, cfg.HeartbeatInterval = 20*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond
	cfg.UsageSpread = 0 // usage is sent at once, as it waits for nothing here
	b, err := nvmlgpu.Open(node.Server)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	var metrics string
	go func() {
		time.Sleep(250 * time.Millisecond)
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			metrics = string(data)
			mu.Unlock()
		}
	}()
	open := func(context.Context) (gpu.Source, string, error) { return b, "550.54.15", nil }
	if err := serve(ctx, cfg, credential{Credential: "c"}, open, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Read(context.Background(), cfg.CacheFile, time.Second); err != nil {
		t.Errorf("cache: %v", err)
	}
	if _, err := os.Stat(cfg.statusPath()); err != nil {
		t.Errorf("status file: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{wire.PathInventory, wire.PathSchedule, wire.PathHeartbeat} {
		if seen[p] == 0 {
			t.Errorf("portal never saw %s", p)
		}
	}
	// client_golang writes labels sorted by name.
	gpu0 := `{Hostname="gpu01",UUID="` + node.UUID(0) + `",device="nvidia0",gpu="0",`
	if !strings.Contains(metrics, `DCGM_FI_DEV_FB_USED`+gpu0) || !strings.Contains(metrics, `pci_bus_id="`+agenttest.PCIBusID(0)+`"`) ||
		!strings.Contains(metrics, `DCGM_FI_DEV_GPU_TEMP`+gpu0) || !strings.Contains(metrics, `DCGM_FI_DEV_POWER_USAGE`+gpu0) ||
		!strings.Contains(metrics, `user="alice"`) {
		t.Errorf("metrics:\n%s", metrics)
	}
}

// TestServeDegraded: the metrics port is taken (dcgm-exporter, another
// agent) and NVML fails twice (driver not loaded yet at boot). The daemon
// must keep running, write its status meanwhile, pick the GPUs up once NVML
// answers and say in status that /metrics is not served.
func TestServeDegraded(t *testing.T) {
	node := agenttest.NewNode(t)
	var mu sync.Mutex
	seen := map[string]int{}
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == wire.PathSchedule {
			_ = json.NewEncoder(w).Encode(wire.Schedule{Node: "gpu01"})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer portal.Close()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	cfg := defaultConfig()
	cfg.StateDir, cfg.CacheFile, cfg.MetricsAddr, cfg.Node = dir, filepath.Join(dir, "schedule.json"), taken.Addr().String(), "gpu01"
	cfg.PortalURL, cfg.NVMLRetry = portal.URL, 10*time.Millisecond
	cfg.SampleInterval, cfg.SyncInterval, cfg.DeliverInterval, cfg.HeartbeatInterval = 20*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond
	cfg.UsageSpread = 0 // usage is sent at once, as it waits for nothing here
	b, err := nvmlgpu.Open(node.Server)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var tries int
	var sawDegraded daemon.Status
	open := func(context.Context) (gpu.Source, string, error) {
		tries++
		if tries <= 3 {
			if tries == 3 { // the status written while degraded
				data, _ := os.ReadFile(cfg.statusPath())
				_ = json.Unmarshal(data, &sawDegraded)
			}
			return nil, "", errors.New("nvml: init: ERROR_DRIVER_NOT_LOADED")
		}
		return b, "550.54.15", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if err := serve(ctx, cfg, credential{Credential: "c"}, open, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("serve: %v (a taken metrics port or a late driver must not stop the daemon)", err)
	}
	if sawDegraded.NVMLOK || sawDegraded.NVMLDownSince.IsZero() || !strings.Contains(sawDegraded.NVMLError, "DRIVER_NOT_LOADED") {
		t.Errorf("status while degraded = %+v; want nvml_ok false, down since, the error", sawDegraded)
	}
	data, err := os.ReadFile(cfg.statusPath())
	if err != nil {
		t.Fatal(err)
	}
	var st daemon.Status
	_ = json.Unmarshal(data, &st)
	if !st.NVMLOK || !st.NVMLDownSince.IsZero() || len(st.GPUs) != 8 || st.MetricsProblem == "" {
		t.Errorf("final status nvml_ok %v down %v gpus %d metrics %q; want GPUs picked up and the metrics problem named",
			st.NVMLOK, st.NVMLDownSince, len(st.GPUs), st.MetricsProblem)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[wire.PathInventory] == 0 {
		t.Errorf("inventory never sent after NVML came up")
	}
}
