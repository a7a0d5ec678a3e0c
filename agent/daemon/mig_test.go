package daemon_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/loginenv"
	"github.com/gpubook/gpubook/agent/nvmlgpu/migmock"
	"github.com/gpubook/gpubook/models/wire"
)

// sevenSlices is GPU 3 of the rig split into seven 1g.5gb instances
// (gi 7–13), each listing the processes procs gives it.
func sevenSlices(procs map[int][]agenttest.Proc) agenttest.GPUState {
	st := agenttest.GPUState{MIG: true}
	for j := range 7 {
		in := agenttest.MIG{Instance: migmock.Instance{UUID: migUUID(j), GI: 7 + j, Profile: "1g.5gb", Slices: 1, MemoryMiB: 4864},
			Procs: procs[j]}
		for _, p := range procs[j] {
			in.UsedMiB += p.MemMiB
		}
		st.Instances = append(st.Instances, in)
		st.Procs = append(st.Procs, procs[j]...)
		st.UsedMiB += in.UsedMiB
	}
	return st
}

func migUUID(j int) string {
	return "MIG-0000000" + string(rune('0'+j)) + "-1111-2222-3333-444444444444"
}

// TestMIGInstanceEndToEnd: a GPU split into seven instances is reported
// with them in the inventory; alice's booking of one instance gives her
// login that instance's MIG UUID, the lock that instance (not the GPU's
// others), and her use lands in that instance's usage record, none in the
// GPU's. When an admin reconfigures the GPU, the inventory goes again.
func TestMIGInstanceEndToEnd(t *testing.T) {
	r := newRig(t)
	l := &syncs{}
	r.lock, r.lockMode = l, "lock v2"
	r.procs.Add(t, 100, agenttest.UIDAlice)
	r.node.Set(3, sevenSlices(map[int][]agenttest.Proc{2: {{PID: 100, MemMiB: 3000}}}))
	r.portal.schedule = wire.Schedule{Node: "n1", Bookings: []wire.Booking{
		{ID: 1, User: "alice", GPUUUIDs: []string{migUUID(2)}, StartsAt: t0, EndsAt: t0.Add(time.Hour)}}}
	d := r.start()
	if err := d.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	inv := r.portal.inventory
	if inv == nil || len(inv.GPUs) != 8 {
		t.Fatalf("inventory = %+v, want 8 GPUs", inv)
	}
	g3 := inv.GPUs[3]
	want := wire.MIGInstance{UUID: migUUID(2), Profile: "1g.5gb", GPUInstance: 9, ComputeInstance: 0, Slices: 1, MemoryMiB: 4864}
	if !g3.MIG || g3.MIGSlices != 7 || len(g3.Instances) != 7 || g3.Instances[2] != want || inv.GPUs[2].MIG || inv.GPUs[2].Instances != nil {
		t.Errorf("inventory GPU 3 = %+v, want MIG, 7 slices, seven instances, the third %+v", g3, want)
	}

	f, err := cache.Read(context.Background(), r.dir+"/schedule.json", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	env := loginenv.Compute(f, "alice", t0.Add(time.Minute), time.UTC)
	if got, want := env.Shell(), "export CUDA_VISIBLE_DEVICES="+migUUID(2)+"; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n"; got != want {
		t.Errorf("login shell = %q, want %q", got, want)
	}
	if got, want := env.Hint, "gpubook: GPU 3 1g.5gb booked until 15:00"; got != want {
		t.Errorf("login hint = %q, want %q", got, want)
	}

	r.run(d, 70*time.Second)
	if err := d.DeliverOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	last := l.migs[len(l.migs)-1]
	if len(last) != 7 || !reflect.DeepEqual(last[2], lock.MIGInstance{UUID: migUUID(2), ParentMinor: 3, GPUInstance: 9, ComputeInstance: 0}) {
		t.Errorf("lock given %+v, want GPU 3's seven instances, the third gi 9", last)
	}
	if got := l.calls[len(l.calls)-1].allowed; !reflect.DeepEqual(got, []int(nil)) {
		// Without the driver's table the booked instance's parent stays
		// closed (see lock.AllowFor); the kernel test opens it with one.
		t.Errorf("alice's GPU minors without a capability table = %v, want none", got)
	}
	r.portal.mu.Lock()
	rec, ok := r.portal.records[wire.UsageRecord{GPUUUID: migUUID(2), Minute: t0}.Key("n1")]
	_, parent := r.portal.records[wire.UsageRecord{GPUUUID: r.node.UUID(3), Minute: t0}.Key("n1")]
	_, other := r.portal.records[wire.UsageRecord{GPUUUID: migUUID(5), Minute: t0}.Key("n1")]
	r.portal.mu.Unlock()
	wantUsers := []wire.UserUsage{{User: "alice", UID: agenttest.UIDAlice, MemoryMiB: 3000, Processes: 1, Busy: true}}
	if !ok || rec.UtilAvgPct != nil || rec.MemUsedMiB != 3000 || rec.MemTotalMiB != 4864 || !reflect.DeepEqual(rec.Users, wantUsers) {
		t.Errorf("instance record = %+v (found %v), want alice's 3000 MiB of 4864", rec, ok)
	}
	if parent || !other {
		t.Errorf("records: GPU 3's own %v (want none), another instance's %v (want one)", parent, other)
	}

	// Reconfigured: 3g.20gb + 4g.20gb. The next sample sends the inventory again.
	r.node.Set(3, agenttest.GPUState{MIG: true, Instances: []agenttest.MIG{
		{Instance: migmock.Instance{UUID: migUUID(7), GI: 1, Profile: "4g.20gb", Slices: 4, MemoryMiB: 19968}},
		{Instance: migmock.Instance{UUID: migUUID(8), GI: 2, Profile: "3g.20gb", Slices: 3, MemoryMiB: 19968}}}})
	r.run(d, 10*time.Second)
	if err := d.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g3 := r.portal.inventory.GPUs[3]; len(g3.Instances) != 2 || g3.Instances[0].Profile != "4g.20gb" || g3.Instances[1].UUID != migUUID(8) {
		t.Errorf("inventory after reconfiguration: GPU 3 = %+v, want the 4g.20gb and 3g.20gb instances", g3)
	}
	if f, _ := cache.Read(context.Background(), r.dir+"/schedule.json", time.Second); len(f.GPUs[3].Instances) != 2 {
		t.Errorf("cache after reconfiguration lists %d instances of GPU 3, want 2", len(f.GPUs[3].Instances))
	}
}
