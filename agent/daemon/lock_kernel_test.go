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
			// On cgroup2 each GPU she was refused is reported once, with her
			// name and no process; v1 cannot count refusals.
			want := map[string]int{wire.ViolationUnbooked + " 3": alice.PID()}
			if cg.Version == 2 {
				for _, g := range []int{0, 1, 3} {
					want[fmt.Sprintf("%s %d", wire.ViolationRefused, g)] = 0
				}
			}
			expectViolations(t, r, want)
			var refused3 wire.Violation
			for _, v := range r.portal.violations {
				if v.User != "alice" || v.UID != agenttest.UIDAlice {
					t.Errorf("violation = %+v, want alice's", v)
				}
				if v.Kind == wire.ViolationRefused && v.GPUUUID == r.node.UUID(3) {
					refused3 = v
				}
				if v.Kind == wire.ViolationRefused && (v.Action != wire.ActionNone || !v.FirstSeen.Equal(t0.Add(10*time.Second)) || !v.LastSeen.Equal(v.FirstSeen)) {
					t.Errorf("refused open = %+v, want action none, first and last seen at the sample after the opens", v)
				}
			}
			if cg.Version == 2 { // refused again: the same violation, seen later
				if got := alice.Open(t, n.GPU(3)); got != "EPERM" {
					t.Fatalf("open nvidia3 = %s, want EPERM", got)
				}
				r.run(d, 30*time.Second)
				if err := d.DeliverOnce(context.Background()); err != nil {
					t.Fatal(err)
				}
				expectViolations(t, r, want)
				if v := r.portal.violations[refused3.ID]; !v.FirstSeen.Equal(refused3.FirstSeen) || !v.LastSeen.After(refused3.LastSeen) {
					t.Errorf("GPU 3 refused again: %+v, want first seen %s and a later last seen", v, refused3.FirstSeen)
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

// expectViolations checks the portal's violations by "kind minor" → PID.
func expectViolations(t *testing.T, r *rig, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, v := range r.portal.violations {
		for g := range 8 {
			if v.GPUUUID == r.node.UUID(g) {
				got[fmt.Sprintf("%s %d", v.Kind, g)] = v.PID
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(r.portal.violations) != len(want) {
		t.Errorf("violations (kind GPU → PID) = %v, want %v", got, want)
	}
}
