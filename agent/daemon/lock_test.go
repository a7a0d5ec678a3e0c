package daemon_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/nvmlgpu/migmock"
	"github.com/gpubook/gpubook/models/wire"
)

// syncs records what the daemon asks of the device lock; agent/lock's own
// tests check the rules on a real kernel.
type syncs struct {
	calls []lockCall
	migs  [][]lock.MIGInstance // what each call was given
	mig   [][]int              // minors of the GPUs in MIG mode, per call
	err   error
}

type lockCall struct {
	at      time.Time
	allowed []int // alice's GPU minors at that time
}

func (s *syncs) Sync(now time.Time, bookings []wire.Booking, gpus []lock.GPU, migs []lock.MIGInstance) error {
	s.calls = append(s.calls, lockCall{now, lock.AllowFor(bookings, "alice", now, gpus, migs, nil).GPUMinors})
	s.migs = append(s.migs, migs)
	var mig []int
	for _, g := range gpus {
		if g.MIG {
			mig = append(mig, g.Minor)
		}
	}
	s.mig = append(s.mig, mig)
	return s.err
}

func TestLockFollowsEverySample(t *testing.T) {
	r := newRig(t)
	l := &syncs{}
	r.lock, r.lockMode = l, "lock v2"
	r.portal.schedule = wire.Schedule{Node: "n1", Bookings: []wire.Booking{
		{ID: 1, User: "alice", GPUUUIDs: []string{r.node.UUID(2), r.node.UUID(5)}, StartsAt: t0.Add(20 * time.Second), EndsAt: t0.Add(40 * time.Second)}}}
	d := r.start()
	if err := d.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.run(d, time.Minute)
	want := [][]int{nil, nil, {2, 5}, {2, 5}, nil, nil}
	if len(l.calls) != len(want) {
		t.Fatalf("lock synced %d times in 6 samples, want 6", len(l.calls))
	}
	for i, c := range l.calls {
		if !c.at.Equal(t0.Add(time.Duration(i)*10*time.Second)) || !slices.Equal(c.allowed, want[i]) {
			t.Errorf("sample %d: synced at %s allowing %v, want %s allowing %v", i, c.at, c.allowed, t0.Add(time.Duration(i)*10*time.Second), want[i])
		}
	}
	l.err = errors.Join(errors.New("move 42: permission denied"), errors.New("second problem"))
	r.run(d, 10*time.Second)
	if err := d.HeartbeatOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := d.CurrentStatus()
	wantErr := "move 42: permission denied second problem"
	if st.Lock != "lock v2" || st.LockError != wantErr {
		t.Errorf("status lock %q error %q, want %q and %q", st.Lock, st.LockError, "lock v2", wantErr)
	}
	if got, want := r.portal.heartbeat.Lock, "lock v2 (error: "+wantErr+")"; got != want {
		t.Errorf("heartbeat lock = %q, want %q", got, want)
	}
}

func TestNoLockInDetectMode(t *testing.T) {
	r := newRig(t)
	r.lockMode = "detect (cannot lock: not running as root)"
	d := r.start()
	r.run(d, 10*time.Second)
	if err := d.HeartbeatOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.portal.heartbeat.Lock; got != r.lockMode {
		t.Errorf("heartbeat lock = %q, want %q", got, r.lockMode)
	}
}

// TestLockGetsMIGInstances: the MIG instances NVML lists on a GPU reach the
// lock with their parent's minor and their ids, so that a booking of one
// opens its capability files; a sample in which that GPU does not answer
// keeps them (no flapping mid-booking); MIG turned off drops them.
func TestLockGetsMIGInstances(t *testing.T) {
	r := newRig(t)
	l := &syncs{}
	r.lock, r.lockMode = l, "lock v1"
	dev := r.node.Server.Devices[3].(*dgxa100.Device)
	mig := func(uuid string, gi, ci int) agenttest.MIG {
		return agenttest.MIG{Instance: migmock.Instance{UUID: uuid, GI: gi, CI: ci, Profile: "1g.5gb", Slices: 1, MemoryMiB: 4864}}
	}
	r.node.Set(3, agenttest.GPUState{MIG: true, Instances: []agenttest.MIG{mig("MIG-a", 1, 0), mig("MIG-b", 2, 1)}})
	d := r.start()
	r.run(d, 10*time.Second)
	want := []lock.MIGInstance{{UUID: "MIG-a", ParentMinor: 3, GPUInstance: 1, ComputeInstance: 0},
		{UUID: "MIG-b", ParentMinor: 3, GPUInstance: 2, ComputeInstance: 1}}
	if got := l.migs[len(l.migs)-1]; !reflect.DeepEqual(got, want) {
		t.Fatalf("lock given %+v, want %+v", got, want)
	}
	if got := l.mig[len(l.mig)-1]; !slices.Equal(got, []int{3}) {
		t.Errorf("GPUs in MIG mode given to the lock: %v, want [3]", got)
	}
	memory := dev.GetMemoryInfoFunc
	dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
	if err := d.SampleOnce(context.Background()); err == nil {
		t.Fatal("sample with GPU 3 lost: no error")
	}
	if got := l.migs[len(l.migs)-1]; !reflect.DeepEqual(got, want) {
		t.Errorf("GPU 3 did not answer: lock given %+v, want the last instances %+v", got, want)
	}
	dev.GetMemoryInfoFunc = memory
	r.node.Set(3, agenttest.GPUState{})
	r.run(d, 10*time.Second)
	if got := l.migs[len(l.migs)-1]; len(got) != 0 || len(l.mig[len(l.mig)-1]) != 0 {
		t.Errorf("MIG off: lock given %+v and MIG GPUs %v, want none", got, l.mig[len(l.mig)-1])
	}
}

// TestLockSaysWhenItGuardsNothing: a lock that passed its self-check is
// not shown as active before a sync has written rules for the node's GPUs
// (status, and the heartbeat the node page shows); after it, it is.
func TestLockSaysWhenItGuardsNothing(t *testing.T) {
	r := newRig(t)
	r.lock, r.lockMode = &syncs{}, "lock v1"
	d := r.start()
	if err := d.HeartbeatOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "lock v1" + wire.LockGuardingNothing + "no GPU listed yet)"
	if got := d.CurrentStatus().Lock; got != want || !wire.LockIdle(got) {
		t.Errorf("before any sample: status lock %q, want %q", got, want)
	}
	if got := r.portal.heartbeat.Lock; got != want {
		t.Errorf("before any sample: heartbeat lock %q, want %q", got, want)
	}
	r.run(d, 10*time.Second)
	if err := d.HeartbeatOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := d.CurrentStatus().Lock; got != "lock v1" {
		t.Errorf("after a sample: status lock %q, want lock v1", got)
	}
	if got := r.portal.heartbeat.Lock; got != "lock v1" {
		t.Errorf("after a sample: heartbeat lock %q, want lock v1", got)
	}
}
