package daemon_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/models/wire"
)

// TestBookedMIGInstanceOnlyWithLock: GPU 3 is split into seven 1g.5gb
// instances (gi 7–13) and alice books the third (gi 9). Through the
// daemon, on the real kernel, after the next sample she opens the parent
// GPU and exactly her instance's two capability files (ENXIO: no driver
// here), not another instance's nor another GPU (EPERM); when the booking
// ends they close.
func TestBookedMIGInstanceOnlyWithLock(t *testing.T) {
	for name, cg := range locktest.Hierarchies(fmt.Sprintf("gpubook-test-dm%d", os.Getpid())) {
		t.Run(name, func(t *testing.T) {
			locktest.Require(t, cg)
			t.Cleanup(func() {
				if err := lock.Unlock(cg, nil); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			})
			n := locktest.NewNode(t, map[string]int{"alice": agenttest.UIDAlice})
			capsMajor := locktest.FreeMajor(t)
			c := locktest.CapMinor
			mine, other := [2]int{c(3, 9, -1), c(3, 9, 0)}, [2]int{c(3, 10, -1), c(3, 10, 0)}
			capPath := n.Caps(t, capsMajor, mine[0], mine[1], other[0], other[1])
			tab, err := lock.ParseMIGMinors(strings.NewReader(locktest.MIGMinors(8)))
			if err != nil {
				t.Fatal(err)
			}
			alice := n.Start(t, agenttest.UIDAlice, cg)
			r := newRig(t)
			r.node.Set(3, sevenSlices(nil))
			users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"), PIDs: map[int]bool{alice.PID(): true}}
			r.lock = lock.New(cg, "/proc", lock.Majors{GPU: 195, Caps: capsMajor}, tab, exempt.Default(), users, nil)
			r.lockMode = "lock " + cg.Name()
			end := t0.Add(5 * time.Minute)
			r.portal.schedule = wire.Schedule{Node: "n1", Bookings: []wire.Booking{
				{ID: 1, User: "alice", GPUUUIDs: []string{migUUID(2)}, StartsAt: t0, EndsAt: end}}}
			d := r.start()
			if err := d.SyncOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			r.run(d, 10*time.Second)
			want := map[string]string{n.GPU(3): "ENXIO", capPath(mine[0]): "ENXIO", capPath(mine[1]): "ENXIO",
				capPath(other[0]): "EPERM", capPath(other[1]): "EPERM", n.GPU(2): "EPERM"}
			for path, w := range want {
				if got := alice.Open(t, path); got != w {
					t.Errorf("open %s = %s, want %s", strings.TrimPrefix(path, n.Dir+"/"), got, w)
				}
			}
			r.now = end
			r.run(d, 10*time.Second)
			for _, path := range []string{n.GPU(3), capPath(mine[0]), capPath(mine[1])} {
				if got := alice.Open(t, path); got != "EPERM" {
					t.Errorf("after the booking ended: open %s = %s, want EPERM", strings.TrimPrefix(path, n.Dir+"/"), got)
				}
			}
		})
	}
}
