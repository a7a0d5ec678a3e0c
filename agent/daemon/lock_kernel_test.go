package daemon_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/models/wire"
)

func TestMain(m *testing.M) {
	locktest.MaybeOpener()
	os.Exit(m.Run())
}

// TestBookedGPUsOnlyWithLock is the case through the daemon, on the
// real kernel: alice books GPUs 2 and 5 and exports
// CUDA_VISIBLE_DEVICES=0,1,2,3. After the next sample she cannot open GPU
// 3 (EPERM); her booked GPUs get past the cgroup (ENXIO: no driver here).
// A process of hers that got GPU 3 before it was placed is still reported,
// with her name; when the booking ends, its GPUs close at the next sample.
func TestBookedGPUsOnlyWithLock(t *testing.T) {
	for name, cg := range locktest.Hierarchies(fmt.Sprintf("gpubook-test-d%d", os.Getpid())) {
		t.Run(name, func(t *testing.T) {
			locktest.Require(t, cg)
			t.Cleanup(func() {
				if err := lock.Unlock(cg, nil); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			})
			n := locktest.NewNode(t, map[string]int{"alice": agenttest.UIDAlice})
			alice := n.Start(t, agenttest.UIDAlice, cg)
			r := newRig(t)
			r.procs.Add(t, alice.PID(), agenttest.UIDAlice) // the detector's view of her process
			users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"), PIDs: map[int]bool{alice.PID(): true}}
			r.lock, r.lockMode = lock.New(cg, "/proc", lock.Majors{GPU: 195}, nil, exempt.Default(), users, nil), "lock "+cg.Name()
			end := t0.Add(5 * time.Minute)
			r.portal.schedule = wire.Schedule{Node: "n1", Bookings: []wire.Booking{
				{ID: 1, User: "alice", GPUUUIDs: []string{r.node.UUID(2), r.node.UUID(5)}, StartsAt: t0, EndsAt: end}}}
			d := r.start()
			if err := d.SyncOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := alice.Open(t, n.GPU(3)); got != "ENXIO" {
				t.Fatalf("before the first sample: open nvidia3 = %s, want ENXIO (not locked yet)", got)
			}
			r.node.Set(3, agenttest.GPUState{Util: 90, UsedMiB: 2000, Procs: []agenttest.Proc{{PID: alice.PID(), MemMiB: 2000}}})
			r.run(d, 10*time.Second)
			for minor, want := range map[int]string{2: "ENXIO", 5: "ENXIO", 3: "EPERM", 0: "EPERM", 1: "EPERM"} {
				if got := alice.Open(t, n.GPU(minor)); got != want {
					t.Errorf("open nvidia%d = %s, want %s", minor, got, want)
				}
			}
			r.run(d, time.Minute)
			if err := d.DeliverOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(r.portal.violations) != 1 {
				t.Fatalf("violations = %v, want alice's on GPU 3", r.portal.violations)
			}
			for _, v := range r.portal.violations {
				if v.User != "alice" || v.Kind != wire.ViolationUnbooked || v.GPUUUID != r.node.UUID(3) || v.PID != alice.PID() {
					t.Errorf("violation = %+v, want alice's unbooked use of GPU 3", v)
				}
			}
			r.node.Set(3, agenttest.GPUState{})
			r.now = end
			r.run(d, 10*time.Second)
			if got := alice.Open(t, n.GPU(2)); got != "EPERM" {
				t.Errorf("after the booking ended: open nvidia2 = %s, want EPERM", got)
			}
			if err := d.HeartbeatOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got, want := r.portal.heartbeat.Lock, "lock "+cg.Name(); got != want {
				t.Errorf("heartbeat lock = %q, want %q", got, want)
			}
		})
	}
}
