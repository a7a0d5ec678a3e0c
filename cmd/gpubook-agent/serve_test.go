package main

import (
	"context"
	"encoding/json"
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
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/models"
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
		if r.URL.Path == models.AgentPathSchedule {
			w.Header().Set("ETag", `"1"`)
			_ = json.NewEncoder(w).Encode(models.AgentSchedule{Node: "gpu01", Bookings: []models.AgentBooking{
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
	if err := serve(ctx, cfg, credential{Credential: "c"}, b, "550.54.15", slog.New(slog.DiscardHandler)); err != nil {
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
	for _, p := range []string{models.AgentPathInventory, models.AgentPathSchedule, models.AgentPathHeartbeat} {
		if seen[p] == 0 {
			t.Errorf("portal never saw %s", p)
		}
	}
	if !strings.Contains(metrics, `DCGM_FI_DEV_FB_USED{gpu="0",UUID="`+node.UUID(0)) || !strings.Contains(metrics, `user="alice"`) {
		t.Errorf("metrics:\n%s", metrics)
	}
}
