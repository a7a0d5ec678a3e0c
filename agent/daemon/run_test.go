package daemon_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/metrics"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/spool"
)

// TestRunLoops runs the real loops (both goroutines) with millisecond
// tickers and a clock that jumps 10 s per reading, then stops: the portal
// must have the inventory, heartbeats and usage, and the spool be empty.
// Run it with -race.
func TestRunLoops(t *testing.T) {
	r := newRig(t)
	var mu sync.Mutex
	clock := t0
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(10 * time.Second)
		return clock
	}
	b, err := nvmlgpu.Open(r.node.Server)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sp, err := spool.Open(filepath.Join(r.dir, "spool"), spool.DefaultLimits(), now, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(r.portal.srv.URL, "node-cred", "test")
	res := procfs.New(r.procs.Root, r.procs.Passwd, r.procs.Group)
	d, err := daemon.New(context.Background(), daemon.Config{Node: "n1", CachePath: filepath.Join(r.dir, "schedule.json"),
		StatusPath: filepath.Join(r.dir, "status.json"), WatermarkPath: filepath.Join(r.dir, "wm.json"), BusyPct: 5,
		SampleInterval: 2 * time.Millisecond, SyncInterval: 5 * time.Millisecond, DeliverInterval: 5 * time.Millisecond,
		HeartbeatInterval: 10 * time.Millisecond},
		daemon.Deps{Source: b, Resolver: res, Portal: c, Spool: sp, Detector: detect.New("n1", detect.DefaultPolicy(), nil, nil, res, nil),
			Metrics: metrics.New("n1"), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	r.portal.mu.Lock()
	defer r.portal.mu.Unlock()
	if r.portal.inventory == nil || r.portal.heartbeats == 0 || len(r.portal.records) == 0 {
		t.Errorf("inventory %v, heartbeats %d, records %d; want all non-zero", r.portal.inventory != nil, r.portal.heartbeats, len(r.portal.records))
	}
	if got := sp.Stats().Depth; got != 0 {
		t.Errorf("spool depth after Run = %d, want 0", got)
	}
}
