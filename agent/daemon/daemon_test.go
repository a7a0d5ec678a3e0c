package daemon_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/loginenv"
	"github.com/gpubook/gpubook/agent/metrics"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// rig is one node: simulated GPUs, /proc tree, state directory, portal, clock.
type rig struct {
	t        *testing.T
	node     *agenttest.Node
	procs    *agenttest.Procs
	portal   *fakePortal
	dir      string
	now      time.Time
	log      *slog.Logger // nil: discarded
	lock     daemon.Locker
	lockMode string
	spread   time.Duration // Config.UsageSpread
}

var t0 = time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)

func newRig(t *testing.T) *rig {
	return &rig{t: t, node: agenttest.NewNode(t), procs: agenttest.NewProcs(t), portal: newFakePortal(t), dir: t.TempDir(), now: t0}
}

// start builds a daemon over the rig's persistent state, as a (re)started
// process would.
func (r *rig) start() *daemon.Daemon {
	r.t.Helper()
	b, err := nvmlgpu.Open(r.node.Server)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { b.Close() })
	now := func() time.Time { return r.now }
	sp, err := spool.Open(filepath.Join(r.dir, "spool"), spool.DefaultLimits(), now, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	c := client.New(r.portal.srv.URL, "node-cred", "test")
	c.Attempts, c.Sleep = 1, func(context.Context, time.Duration) error { return nil }
	res := procfs.New(r.procs.Root, r.procs.Passwd, r.procs.Group)
	det := detect.New("n1", detect.DefaultPolicy(), daemon.KillSignaller{}, nil, res, nil)
	d, err := daemon.New(context.Background(), daemon.Config{Node: "n1", AgentVersion: "test",
		CachePath: filepath.Join(r.dir, "schedule.json"), StatusPath: filepath.Join(r.dir, "status.json"),
		WatermarkPath: filepath.Join(r.dir, "watermark.json"), MinutePath: filepath.Join(r.dir, "minute.json"), BusyPct: 5, LockMode: r.lockMode,
		UsageSpread: r.spread, SampleInterval: time.Hour, SyncInterval: time.Hour, DeliverInterval: time.Hour, HeartbeatInterval: time.Hour},
		daemon.Deps{Source: b, Resolver: res, Portal: c, Spool: sp, Detector: det, Metrics: metrics.New("n1"), Now: now, Log: r.log, Lock: r.lock})
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// run samples every 10 s and delivers every 30 s for d of simulated time.
func (r *rig) run(dm *daemon.Daemon, d time.Duration) {
	r.t.Helper()
	for end := r.now.Add(d); r.now.Before(end); r.now = r.now.Add(10 * time.Second) {
		if err := dm.SampleOnce(context.Background()); err != nil {
			r.t.Fatal(err)
		}
		if r.now.Second() == 0 || r.now.Second() == 30 {
			_ = dm.DeliverOnce(context.Background()) // fails while the portal is down
		}
	}
}

// checkExactlyOnce asserts one stored record per GPU per minute in [from, to).
func (r *rig) checkExactlyOnce(from, to time.Time) {
	r.t.Helper()
	p := r.portal
	p.mu.Lock()
	defer p.mu.Unlock()
	want := 0
	for m := from; m.Before(to); m = m.Add(time.Minute) {
		for i := range 8 {
			want++
			k := wire.UsageRecord{GPUUUID: r.node.UUID(i), Minute: m}.Key("n1")
			if _, ok := p.records[k]; !ok {
				r.t.Errorf("minute lost: %s", k)
			}
		}
	}
	if got := len(p.records); got != want {
		r.t.Errorf("stored records = %d, want %d", got, want)
	}
}

func TestOutageLosesNothing(t *testing.T) {
	r := newRig(t)
	d := r.start()
	r.run(d, 3*time.Minute)
	r.portal.setDown(true)
	r.run(d, 20*time.Minute)
	if st := d.CurrentStatus(); st.SpoolDepth < 19 || st.SyncError == "" {
		t.Errorf("during outage: spool depth %d, sync error %q; want ≥ 19 and an error", st.SpoolDepth, st.SyncError)
	}
	r.portal.setDown(false)
	r.run(d, 5*time.Minute)
	if err := d.DeliverOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.checkExactlyOnce(t0, r.now.Add(-10*time.Second).Truncate(time.Minute)) // the last minute is still open
	for k, n := range r.portal.receipts {
		if n != 1 {
			t.Errorf("%s received %d times, want 1", k, n)
		}
	}
	if got := d.CurrentStatus().SpoolDepth; got != 0 {
		t.Errorf("spool depth after recovery = %d, want 0", got)
	}
}

// TestKillMidBatch: the agent spools minutes, the portal stores a batch but
// the agent dies before it sees the ack, and more minutes sit in the spool
// unsent. A new process on the same state directory delivers everything;
// the portal's dedup by key absorbs the one resend.
func TestKillMidBatch(t *testing.T) {
	r := newRig(t)
	d1 := r.start()
	r.run(d1, 2*time.Minute)
	r.portal.mu.Lock()
	r.portal.loseAcks = 1
	r.portal.mu.Unlock()
	r.run(d1, 10*time.Second) // 14:02:00: minute 14:01 is stored by the portal, the ack is lost
	r.portal.setDown(true)
	r.run(d1, 3*time.Minute+10*time.Second) // until 14:05:20: minutes 14:02–14:04 wait in the spool
	// kill -9 at 14:05:20: no Stop; minute.json holds 14:05 so far.
	r.portal.setDown(false)
	d2 := r.start() // restarted in the same minute, on the same state directory
	if got := d2.CurrentStatus().SpoolDepth; got != 4 {
		t.Fatalf("spool depth after restart = %d, want 4 (the un-acked batch + 3 minutes)", got)
	}
	r.run(d2, 3*time.Minute)
	if err := d2.Stop(); err != nil {
		t.Fatal(err)
	}
	end := r.now.Add(-10 * time.Second).Truncate(time.Minute).Add(time.Minute)
	// A clean stop keeps the minute in progress; the next start, once
	// that minute is over, spools it.
	r.now = r.now.Add(time.Minute)
	d3 := r.start()
	if err := d3.DeliverOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.checkExactlyOnce(t0, end)
	var resent []string
	for k, n := range r.portal.receipts {
		if n > 1 {
			resent = append(resent, k)
		}
	}
	if len(resent) != 8 {
		t.Errorf("resent keys = %v, want the 8 of the un-acked minute 14:01", resent)
	}
	for _, k := range resent {
		if !strings.HasSuffix(k, "14:01:00Z") {
			t.Errorf("resent %s, want only minute 14:01", k)
		}
	}
}

func TestScheduleSyncDrivesLoginEnv(t *testing.T) {
	r := newRig(t)
	r.portal.schedule = wire.Schedule{Node: "n1", PortalURL: "https://gpubook.example.org", Bookings: []wire.Booking{
		{ID: 1, User: "alice", GPUUUIDs: []string{r.node.UUID(2), r.node.UUID(5)}, StartsAt: t0, EndsAt: t0.Add(2 * time.Hour)}}}
	d := r.start()
	if err := d.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	f, err := cache.Read(context.Background(), filepath.Join(r.dir, "schedule.json"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Hour)
	tests := []struct {
		user string
		want string
	}{
		{"alice", "export CUDA_VISIBLE_DEVICES=" + r.node.UUID(2) + "," + r.node.UUID(5) + "; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n"},
		{"bob", "export CUDA_VISIBLE_DEVICES=; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n"},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			if got := loginenv.Compute(f, tt.user, at, time.UTC).Shell(); got != tt.want {
				t.Errorf("env = %q, want %q", got, tt.want)
			}
		})
	}
	if got := loginenv.Compute(f, "alice", t0.Add(2*time.Hour), time.UTC).Visible; len(got) != 0 {
		t.Errorf("after the booking ends: %v, want none", got)
	}
	if err := d.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.portal.notMod != 1 || r.portal.inventory == nil || len(r.portal.inventory.GPUs) != 8 {
		t.Errorf("304s = %d, inventory = %v; want 1 and 8 GPUs", r.portal.notMod, r.portal.inventory)
	}
}

func TestUnbookedProcessReachesPortal(t *testing.T) {
	r := newRig(t)
	r.portal.schedule = wire.Schedule{Node: "n1", Bookings: []wire.Booking{
		{ID: 1, User: "alice", GPUUUIDs: []string{r.node.UUID(0)}, StartsAt: t0, EndsAt: t0.Add(time.Hour)}}}
	r.procs.Add(t, 100, agenttest.UIDAlice)
	r.procs.Add(t, 200, agenttest.UIDBob)
	r.node.Set(0, agenttest.GPUState{Util: 80, UsedMiB: 4000, Procs: []agenttest.Proc{{PID: 100, MemMiB: 4000}}})
	r.node.Set(1, agenttest.GPUState{Util: 80, UsedMiB: 4000, Procs: []agenttest.Proc{{PID: 200, MemMiB: 4000}}})
	d := r.start()
	if err := d.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.run(d, time.Minute)
	if len(r.portal.violations) != 1 {
		t.Fatalf("violations = %v, want bob's only", r.portal.violations)
	}
	for _, v := range r.portal.violations {
		if v.Kind != wire.ViolationUnbooked || v.User != "bob" || v.GPUUUID != r.node.UUID(1) || v.PID != 200 {
			t.Errorf("violation = %+v", v)
		}
	}
	st := d.CurrentStatus()
	if st.GPUs[0].Holder != "alice" || len(st.GPUs[1].Procs) != 1 || st.GPUs[1].Procs[0].User != "bob" {
		t.Errorf("status = %+v", st.GPUs[:2])
	}
}
