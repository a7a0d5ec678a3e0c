package daemon_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// failingSource is a GPU source whose samples fail while fail is set, as
// NVML's do when a GPU falls off the bus or the driver wedges.
type failingSource struct {
	gpu.Source
	fail *atomic.Bool
}

func (s failingSource) Sample(ctx context.Context) ([]gpu.Sample, error) {
	if s.fail.Load() {
		return nil, errors.New("nvml: GPU-0: Unknown Error\n(driver)")
	}
	return s.Source.Sample(ctx)
}

// startFailable builds the rig's daemon on a source that fails on demand,
// with the given heartbeat interval and clock.
func (r *rig) startFailable(fail *atomic.Bool, beat time.Duration, now func() time.Time) *daemon.Daemon {
	r.t.Helper()
	b, err := nvmlgpu.Open(r.node.Server)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { b.Close() })
	sp, err := spool.Open(filepath.Join(r.dir, "spool"), spool.DefaultLimits(), now, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	c := client.New(r.portal.srv.URL, "node-cred", "test")
	c.Attempts, c.Sleep = 1, func(context.Context, time.Duration) error { return nil }
	d, err := daemon.New(context.Background(), daemon.Config{Node: "n1", AgentVersion: "test",
		CachePath: filepath.Join(r.dir, "schedule.json"), StatusPath: filepath.Join(r.dir, "status.json"),
		WatermarkPath: filepath.Join(r.dir, "wm.json"), BusyPct: 5, SampleInterval: 5 * time.Millisecond,
		SyncInterval: time.Hour, DeliverInterval: time.Hour, HeartbeatInterval: beat},
		daemon.Deps{Source: failingSource{Source: b, fail: fail}, Resolver: procfs.New(r.procs.Root, r.procs.Passwd, r.procs.Group),
			Portal: c, Spool: sp, Now: now})
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// lastHeartbeat returns the portal's last heartbeat and forgets it, so
// that the next one is read afresh (the fake decodes into the old one).
func (r *rig) lastHeartbeat() (wire.Heartbeat, int) {
	r.portal.mu.Lock()
	defer r.portal.mu.Unlock()
	hb, n := r.portal.heartbeat, r.portal.heartbeats
	r.portal.heartbeat = wire.Heartbeat{}
	return hb, n
}

// TestSampleErrorsReachThePortal: a failing sample is in the status and in
// the heartbeat, with since when samples fail, until one works again; the
// error is made fit for the portal (no control characters).
func TestSampleErrorsReachThePortal(t *testing.T) {
	r := newRig(t)
	var fail atomic.Bool
	d := r.startFailable(&fail, time.Hour, func() time.Time { return r.now })
	ctx := context.Background()
	step := func(wantErr bool) wire.Heartbeat {
		t.Helper()
		if err := d.SampleOnce(ctx); (err != nil) != wantErr {
			t.Fatalf("sample at %s: %v, want error %v", r.now, err, wantErr)
		}
		if err := d.HeartbeatOnce(ctx); err != nil {
			t.Fatal(err)
		}
		hb, _ := r.lastHeartbeat()
		r.now = r.now.Add(10 * time.Second)
		return hb
	}
	if hb := step(false); hb.SampleError != "" || !hb.SampleFailingSince.IsZero() {
		t.Errorf("healthy: sample error %q since %s", hb.SampleError, hb.SampleFailingSince)
	}
	fail.Store(true)
	failedAt := r.now
	for i := range 3 {
		hb := step(true)
		if got, want := hb.SampleError, "nvml: GPU-0: Unknown Error (driver)"; got != want || !hb.SampleFailingSince.Equal(failedAt) {
			t.Errorf("failing sample %d: heartbeat says %q since %s, want %q since %s", i, got, hb.SampleFailingSince, want, failedAt)
		}
	}
	if st := d.CurrentStatus(); st.SampleError == "" || !st.SampleFailingSince.Equal(failedAt) {
		t.Errorf("status: sample error %q since %s, want one since %s", st.SampleError, st.SampleFailingSince, failedAt)
	}
	fail.Store(false)
	if hb := step(false); hb.SampleError != "" || !hb.SampleFailingSince.IsZero() {
		t.Errorf("recovered: sample error %q since %s", hb.SampleError, hb.SampleFailingSince)
	}
}

// TestSampleFailureSendsHeartbeatAtOnce runs the real loops with an hourly
// heartbeat: the portal must hear that sampling fails, and that it works
// again, long before the next regular heartbeat.
func TestSampleFailureSendsHeartbeatAtOnce(t *testing.T) {
	r := newRig(t)
	var fail atomic.Bool
	var mu sync.Mutex
	clock := t0
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	d := r.startFailable(&fail, time.Hour, now)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitHeartbeat := func(what string, ok func(wire.Heartbeat) bool) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			r.portal.mu.Lock()
			hb, n := r.portal.heartbeat, r.portal.heartbeats
			r.portal.mu.Unlock()
			if n > 0 && ok(hb) {
				return
			}
		}
		t.Fatalf("%s: no such heartbeat within 5 s (hourly heartbeats)", what)
	}
	waitHeartbeat("the first heartbeat", func(wire.Heartbeat) bool { return true })
	fail.Store(true)
	waitHeartbeat("sampling fails", func(hb wire.Heartbeat) bool { return hb.SampleError != "" && !hb.SampleFailingSince.IsZero() })
	r.lastHeartbeat()
	fail.Store(false)
	waitHeartbeat("sampling works again", func(hb wire.Heartbeat) bool { return hb.Node == "n1" && hb.SampleError == "" })
}
