package sampler_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/agent/nvmlgpu/migmock"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

// fixture is a simulated node with a /proc tree and a sampler over both.
type fixture struct {
	node  *agenttest.Node
	procs *agenttest.Procs
	s     *sampler.Sampler
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	node := agenttest.NewNode(t)
	procs := agenttest.NewProcs(t)
	return &fixture{node: node, procs: procs, s: newSampler(t, node, procs)}
}

// newSampler opens the simulated node and samples it with procs as /proc.
func newSampler(tb testing.TB, node *agenttest.Node, procs *agenttest.Procs) *sampler.Sampler {
	tb.Helper()
	b, err := nvmlgpu.Open(node.Server)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	devs, err := b.Devices(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return sampler.New(b, procfs.New(procs.Root, procs.Passwd, procs.Group), devs, nil)
}

func TestSampleAttributesProcesses(t *testing.T) {
	f := newFixture(t)
	f.procs.Add(t, 100, agenttest.UIDAlice)
	f.node.Set(0, agenttest.GPUState{Util: 80, UsedMiB: 9000, Procs: []agenttest.Proc{{PID: 100, MemMiB: 8000}, {PID: 555, MemMiB: 1000}}})
	at := time.Date(2026, 3, 2, 14, 0, 5, 0, time.UTC)
	snap, err := f.s.Sample(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	g := snap.GPUs[0]
	if got, want := len(g.Procs), 1; got != want {
		t.Fatalf("procs = %d, want %d", got, want)
	}
	if got, want := g.Procs[0], (sampler.Proc{PID: 100, UID: agenttest.UIDAlice, User: "alice", MemMiB: 8000}); got != want {
		t.Errorf("proc = %+v, want %+v", got, want)
	}
	if got, want := g.Vanished, 1; got != want {
		t.Errorf("vanished = %d, want %d (pid 555 is not in /proc)", got, want)
	}
	if got, want := g.Device.Index, 0; got != want || g.Device.UUID != f.node.UUID(0) {
		t.Errorf("device = %+v", g.Device)
	}
}

// TestPerMinuteAggregation scripts two minutes of samples every 10 s and
// checks each GPU's and each user's record.
func TestPerMinuteAggregation(t *testing.T) {
	f := newFixture(t)
	f.procs.Add(t, 100, agenttest.UIDAlice)
	f.procs.Add(t, 200, agenttest.UIDBob)
	f.procs.Add(t, 201, agenttest.UIDBob)
	agg := sampler.NewAggregator(5, time.Time{})
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	utils := []uint32{10, 20, 30, 40, 50, 60}
	var got []wire.UsageRecord
	for i := 0; i < 13; i++ { // 14:00:00 … 14:02:00
		f.node.Set(0, agenttest.GPUState{Util: utils[i%6], UsedMiB: int64(1000 * (i%6 + 1)), Procs: []agenttest.Proc{{PID: 100, MemMiB: 500}}})
		st := agenttest.GPUState{Util: 0, UsedMiB: 2000, Procs: []agenttest.Proc{{PID: 200, MemMiB: 700}, {PID: 201, MemMiB: 300}}}
		if i%6 == 5 {
			st.Procs = st.Procs[:1]
		}
		f.node.Set(1, st)
		f.node.Set(2, agenttest.GPUState{MIG: true, UsedMiB: 100})
		snap, err := f.s.Sample(context.Background(), t0.Add(time.Duration(i)*10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, agg.Add(snap)...)
	}
	if n := len(got); n != 16 {
		t.Fatalf("records = %d, want 16 (8 GPUs × 2 complete minutes)", n)
	}
	byKey := map[string]wire.UsageRecord{}
	for _, r := range got {
		byKey[r.Key("n")] = r
	}
	key := func(i int, m int) string {
		return wire.UsageRecord{GPUUUID: f.node.UUID(i), Minute: t0.Add(time.Duration(m) * time.Minute)}.Key("n")
	}
	t.Run("busy GPU", func(t *testing.T) {
		r := byKey[key(0, 0)]
		if r.UtilAvgPct == nil || *r.UtilAvgPct != 35 || *r.UtilMaxPct != 60 || r.MemUsedMiB != 6000 || r.MemTotalMiB != 40960 || r.Samples != 6 {
			t.Errorf("record = %+v", r)
		}
		want := []wire.UserUsage{{User: "alice", UID: agenttest.UIDAlice, MemoryMiB: 500, Processes: 1, Busy: true}}
		if len(r.Users) != 1 || r.Users[0] != want[0] {
			t.Errorf("users = %+v, want %+v", r.Users, want)
		}
	})
	t.Run("idle GPU with two processes of one user", func(t *testing.T) {
		r := byKey[key(1, 1)]
		if r.UtilAvgPct == nil || *r.UtilAvgPct != 0 || *r.UtilMaxPct != 0 || r.Samples != 6 {
			t.Errorf("record = %+v", r)
		}
		want := wire.UserUsage{User: "bob", UID: agenttest.UIDBob, MemoryMiB: 1000, Processes: 2, Busy: false}
		if len(r.Users) != 1 || r.Users[0] != want {
			t.Errorf("users = %+v, want %+v", r.Users, want)
		}
	})
	t.Run("MIG GPU has null utilisation", func(t *testing.T) {
		r := byKey[key(2, 0)]
		if r.UtilAvgPct != nil || r.UtilMaxPct != nil || r.MemUsedMiB != 100 || r.Samples != 6 {
			t.Errorf("record = %+v", r)
		}
	})
	t.Run("batch validates", func(t *testing.T) {
		b := wire.UsageBatch{Node: "n", Records: got}
		if err := b.Validate(); err != nil {
			t.Error(err)
		}
	})
	if rest := agg.Flush(); len(rest) != 8 || rest[0].Samples != 1 {
		t.Errorf("Flush = %d records (first %+v), want 8 one-sample records", len(rest), rest[0])
	}
}

func TestAggregatorSkipsMinutesAlreadySpooled(t *testing.T) {
	f := newFixture(t)
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	agg := sampler.NewAggregator(5, t0) // a previous run spooled 14:00
	for _, at := range []time.Time{t0.Add(30 * time.Second), t0.Add(70 * time.Second), t0.Add(130 * time.Second)} {
		snap, err := f.s.Sample(context.Background(), at)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range agg.Add(snap) {
			if !r.Minute.After(t0) {
				t.Errorf("re-emitted minute %v", r.Minute)
			}
		}
	}
}

// TestAggregatorLateSnapshotAfterEmit: a snapshot that arrives for a minute
// already emitted (the clock stepped back, a slow sample) is dropped; the
// minute is never emitted twice.
func TestAggregatorLateSnapshotAfterEmit(t *testing.T) {
	f := newFixture(t)
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	agg := sampler.NewAggregator(5, time.Time{})
	emitted := map[string]int{}
	record := func(rs []wire.UsageRecord) {
		for _, r := range rs {
			emitted[r.Key("n1")]++
			if r.Samples != 1 {
				t.Errorf("%s: %d samples, want 1 (a late sample landed in another minute)", r.Key("n1"), r.Samples)
			}
		}
	}
	// 14:00:10, 14:01:05, then late ones for 14:00 (emitted) and, after
	// 14:02:05, for 14:01 (left behind), then 14:03:05.
	for _, at := range []time.Time{t0.Add(10 * time.Second), t0.Add(65 * time.Second), t0.Add(50 * time.Second),
		t0.Add(125 * time.Second), t0.Add(110 * time.Second), t0.Add(185 * time.Second)} {
		snap, err := f.s.Sample(context.Background(), at)
		if err != nil {
			t.Fatal(err)
		}
		record(agg.Add(snap))
	}
	record(agg.Flush())
	for k, n := range emitted {
		if n != 1 {
			t.Errorf("%s emitted %d times", k, n)
		}
	}
	if len(emitted) == 0 {
		t.Fatal("nothing emitted")
	}
}

// TestMIGInstanceRecords: a GPU in MIG mode gets one record per instance
// per minute (the instance's UUID and memory, its users from the processes
// NVML lists on it, null utilisation) and none of its own; a MIG GPU that
// lists no instance keeps its own record.
func TestMIGInstanceRecords(t *testing.T) {
	f := newFixture(t)
	f.procs.Add(t, 100, agenttest.UIDAlice)
	f.procs.Add(t, 200, agenttest.UIDBob)
	a := agenttest.MIG{Instance: migmock.Instance{UUID: "MIG-a", GI: 7, Profile: "1g.5gb", Slices: 1, MemoryMiB: 4864},
		UsedMiB: 3000, Procs: []agenttest.Proc{{PID: 100, MemMiB: 2900}}}
	b := agenttest.MIG{Instance: migmock.Instance{UUID: "MIG-b", GI: 8, Profile: "1g.5gb", Slices: 1, MemoryMiB: 4864},
		UsedMiB: 1000, Procs: []agenttest.Proc{{PID: 200, MemMiB: 900}}}
	f.node.Set(3, agenttest.GPUState{MIG: true, UsedMiB: 4000, Procs: append(a.Procs, b.Procs...), Instances: []agenttest.MIG{a, b}})
	f.node.Set(4, agenttest.GPUState{MIG: true, UsedMiB: 10})
	agg := sampler.NewAggregator(5, time.Time{})
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	var got []wire.UsageRecord
	for i := range 7 {
		snap, err := f.s.Sample(context.Background(), t0.Add(time.Duration(i)*10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			units := snap.Units()
			if len(units) != 9 || units[3].Device.UUID != "MIG-a" || units[3].Device.Parent != f.node.UUID(3) || units[3].Device.Label() != "GPU 3 1g.5gb" {
				t.Fatalf("units = %d, the fourth %+v; want 9 with MIG-a of GPU 3 fourth", len(units), units[3].Device)
			}
		}
		got = append(got, agg.Add(snap)...)
	}
	byUUID := map[string]wire.UsageRecord{}
	for _, r := range got {
		byUUID[r.GPUUUID] = r
	}
	if len(got) != 9 {
		t.Fatalf("records = %d, want 9 (7 GPUs, 2 instances, no record of GPU 3)", len(got))
	}
	if _, ok := byUUID[f.node.UUID(3)]; ok {
		t.Error("GPU 3 in MIG mode got a record of its own")
	}
	tests := []struct {
		uuid      string
		used, tot int64
		users     []wire.UserUsage
	}{
		{"MIG-a", 3000, 4864, []wire.UserUsage{{User: "alice", UID: agenttest.UIDAlice, MemoryMiB: 2900, Processes: 1, Busy: true}}},
		{"MIG-b", 1000, 4864, []wire.UserUsage{{User: "bob", UID: agenttest.UIDBob, MemoryMiB: 900, Processes: 1, Busy: true}}},
		{f.node.UUID(4), 10, 40960, []wire.UserUsage{}},
	}
	for _, tt := range tests {
		t.Run(tt.uuid, func(t *testing.T) {
			r := byUUID[tt.uuid]
			if r.UtilAvgPct != nil || r.UtilMaxPct != nil || r.MemUsedMiB != tt.used || r.MemTotalMiB != tt.tot || r.Samples != 6 ||
				!reflect.DeepEqual(r.Users, tt.users) {
				t.Errorf("record = %+v, want %d of %d MiB used by %+v", r, tt.used, tt.tot, tt.users)
			}
		})
	}
	if err := (&wire.UsageBatch{Node: "n", Records: got}).Validate(); err != nil {
		t.Error(err)
	}
}
