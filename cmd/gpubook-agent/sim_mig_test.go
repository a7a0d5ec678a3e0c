package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/loginenv"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/simgpu"
	"github.com/gpubook/gpubook/models/wire"
)

// TestServeSimulatedMIG runs the daemon as `run` wires it for gpu =
// simulated with sim_mig = 1:7x1g.10gb against a stub portal: the
// inventory it sends validates and lists GPU 1's seven instances, and a
// login of the booker of one instance gets its MIG UUID from the cache the
// daemon wrote. (Usage per instance: agent/daemon's TestMIGInstanceEndToEnd.)
func TestServeSimulatedMIG(t *testing.T) {
	layout, err := simgpu.ParseMIG("1:7x1g.10gb")
	if err != nil {
		t.Fatal(err)
	}
	probe, err := simgpu.New(simgpu.Config{Node: "gpu01", GPUs: 2, Dir: t.TempDir(), MIG: layout})
	if err != nil {
		t.Fatal(err)
	}
	slice := probe.MIGUUID(1, 2)
	var mu sync.Mutex
	var inv wire.Inventory
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case wire.PathSchedule:
			w.Header().Set("ETag", `"1"`)
			_ = json.NewEncoder(w).Encode(wire.Schedule{Node: "gpu01", Bookings: []wire.Booking{
				{ID: 1, User: "alice", GPUUUIDs: []string{slice}, StartsAt: time.Now().Add(-time.Hour), EndsAt: time.Now().Add(time.Hour)}}})
			return
		case wire.PathInventory:
			if err := json.NewDecoder(r.Body).Decode(&inv); err != nil || inv.Validate() != nil {
				t.Errorf("inventory: %v, %v", err, inv.Validate())
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer portal.Close()
	dir := t.TempDir()
	cfg := defaultConfig()
	cfg.StateDir, cfg.CacheFile, cfg.MetricsAddr, cfg.Node, cfg.DevDir = dir, filepath.Join(dir, "schedule.json"), "", "gpu01", t.TempDir()
	cfg.PortalURL, cfg.GPU, cfg.Sim = portal.URL, "simulated", simConfig{GPUs: 2, MIG: layout}
	cfg.SampleInterval, cfg.SyncInterval, cfg.DeliverInterval, cfg.HeartbeatInterval = 20*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond, time.Second
	cfg.UsageSpread = 0 // usage is sent at once, as it waits for nothing here
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := serveSimulated(ctx, cfg, credential{Credential: "c"}, procfs.New("/proc", "", ""), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(inv.GPUs) != 2 || inv.GPUs[1].MIGSlices != 7 || len(inv.GPUs[1].Instances) != 7 || inv.GPUs[1].Instances[2].UUID != slice {
		t.Fatalf("inventory = %+v, want GPU 1 with seven instances", inv.GPUs)
	}
	f, err := cache.Read(context.Background(), cfg.CacheFile, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := loginenv.Compute(f, "alice", time.Now(), time.UTC).Visible; len(got) != 1 || got[0] != slice {
		t.Errorf("alice's CUDA_VISIBLE_DEVICES = %v, want [%s]", got, slice)
	}
}
