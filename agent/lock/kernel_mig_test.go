package lock_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	devices "github.com/opencontainers/cgroups/devices/config"

	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/models/wire"
)

// TestMIGLockOnRealCgroups: GPUs 2 and 3 of an 8-GPU node are in MIG mode,
// GPU 3 split into two instances. On the real kernel, with capability files of a major no
// driver answers (ENXIO once past the cgroup, EPERM when denied): alice,
// who booked GPU 3 whole, opens it and every capability file of it, even
// of an instance created later; bob, who booked instance MIG-a, opens GPU
// 3 and MIG-a's two files only; carol, who booked GPU 2, opens none of
// GPU 3's. When bob's booking ends, MIG-a closes at the next sync.
func TestMIGLockOnRealCgroups(t *testing.T) {
	for name, cg := range locktest.Hierarchies(fmt.Sprintf("gpubook-test-m%d", os.Getpid())) {
		t.Run(name, func(t *testing.T) {
			locktest.Require(t, cg)
			t.Cleanup(func() {
				if err := lock.Unlock(cg, nil); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			})
			migScenario(t, cg)
		})
	}
}

func migScenario(t *testing.T, cg *lock.Cgroups) {
	const aliceUID, bobUID, carolUID = 20010, 20011, 20012
	n := locktest.NewNode(t, map[string]int{"alice": aliceUID, "bob": bobUID, "carol": carolUID})
	capsMajor := locktest.FreeMajor(t)
	c := locktest.CapMinor
	aGI, aCI, bGI, bCI, laterGI := c(3, 1, -1), c(3, 1, 0), c(3, 2, -1), c(3, 2, 0), c(3, 5, -1)
	gpu2GI := c(2, 1, -1)
	capPath := n.Caps(t, capsMajor, 1, 2, aGI, aCI, bGI, bCI, laterGI, gpu2GI)
	tab, err := lock.ParseMIGMinors(strings.NewReader(locktest.MIGMinors(8)))
	if err != nil {
		t.Fatal(err)
	}
	alice, bob, carol := n.Start(t, aliceUID, cg), n.Start(t, bobUID, cg), n.Start(t, carolUID, cg)
	users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"),
		PIDs: map[int]bool{alice.PID(): true, bob.PID(): true, carol.PID(): true}}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	gpus := make([]lock.GPU, 8)
	for i := range gpus {
		gpus[i] = lock.GPU{UUID: fmt.Sprintf("GPU-%d", i), Minor: i, MIG: i == 2 || i == 3}
	}
	// As the daemon passes them: NVML's ids, no capability minors.
	migs := []lock.MIGInstance{{UUID: "MIG-a", ParentMinor: 3, GPUInstance: 1, ComputeInstance: 0},
		{UUID: "MIG-b", ParentMinor: 3, GPUInstance: 2, ComputeInstance: 0}}
	bk := func(id int64, user, uuid string, d time.Duration) wire.Booking {
		return wire.Booking{ID: id, User: user, GPUUUIDs: []string{uuid}, StartsAt: t0, EndsAt: t0.Add(d)}
	}
	bookings := []wire.Booking{bk(1, "alice", "GPU-3", 2*time.Hour), bk(2, "bob", "MIG-a", time.Hour), bk(3, "carol", "GPU-2", 2*time.Hour)}
	l := lock.New(cg, "/proc", lock.Majors{GPU: 195, Caps: capsMajor}, tab, exempt.Default(), users, nil)
	expect := func(who string, p *locktest.Proc, want map[string]string) {
		t.Helper()
		for path, w := range want {
			if got := p.Open(t, path); got != w {
				t.Errorf("%s: open %s: got %s, want %s", who, strings.TrimPrefix(path, n.Dir+"/"), got, w)
			}
		}
	}
	if err := l.Sync(t0, bookings, gpus, migs); err != nil {
		t.Fatal(err)
	}
	expect("alice", alice, map[string]string{n.GPU(3): "ENXIO", capPath(aGI): "ENXIO", capPath(aCI): "ENXIO",
		capPath(bGI): "ENXIO", capPath(bCI): "ENXIO", capPath(laterGI): "ENXIO", n.GPU(2): "EPERM", capPath(gpu2GI): "EPERM"})
	expect("bob", bob, map[string]string{n.GPU(3): "ENXIO", capPath(aGI): "ENXIO", capPath(aCI): "ENXIO",
		capPath(bGI): "EPERM", capPath(bCI): "EPERM", capPath(laterGI): "EPERM", n.GPU(2): "EPERM"})
	expect("carol", carol, map[string]string{n.GPU(2): "ENXIO", capPath(gpu2GI): "ENXIO", n.GPU(3): "EPERM",
		capPath(aGI): "EPERM", capPath(aCI): "EPERM", capPath(bGI): "EPERM", capPath(laterGI): "EPERM",
		// config and monitor are no instance's: their file modes guard them.
		capPath(1): "ENXIO", capPath(2): "ENXIO"})

	// Bob's booking ends: his instance closes, alice keeps the whole GPU.
	if err := l.Sync(t0.Add(time.Hour), bookings, gpus, migs); err != nil {
		t.Fatal(err)
	}
	expect("bob", bob, map[string]string{n.GPU(3): "EPERM", capPath(aGI): "EPERM", capPath(aCI): "EPERM"})
	expect("alice", alice, map[string]string{n.GPU(3): "ENXIO", capPath(aCI): "ENXIO"})
}

// BenchmarkApplyMIGRules: rewriting one user's rules on an 8-GPU node, all
// in MIG mode with the driver's table (254 GPU minors and 1080 capability
// files to deny) and without MIG, alternating between two bookings so that every write
// changes something.
func BenchmarkApplyMIGRules(b *testing.B) {
	full, err := lock.ParseMIGMinors(strings.NewReader(locktest.MIGMinors(8)))
	if err != nil {
		b.Fatal(err)
	}
	gpus := make([]lock.GPU, 8)
	for i := range gpus {
		gpus[i] = lock.GPU{UUID: fmt.Sprintf("GPU-%d", i), Minor: i, MIG: true}
	}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, table := range []struct {
		name string
		tab  lock.CapTable
	}{{"mig-table", full}, {"no-table", nil}} {
		nodeCaps := lock.NodeCaps(gpus, nil, table.tab)
		var rules [2][]*devices.Rule
		for i, uuid := range []string{"GPU-2", "GPU-5"} {
			a := lock.AllowFor([]wire.Booking{{User: "alice", GPUUUIDs: []string{uuid}, StartsAt: t0, EndsAt: t0.Add(time.Hour)}}, "alice", t0, gpus, nil, table.tab)
			rules[i] = lock.Rules(a, lock.Majors{GPU: 195, Caps: 509}, nodeCaps)
		}
		for name, cg := range locktest.Hierarchies(fmt.Sprintf("gpubook-bench-%d", os.Getpid())) {
			b.Run(table.name+"/"+name, func(b *testing.B) {
				locktest.Require(b, cg)
				dir, _ := cg.Dir(20099)
				if err := cg.Ensure(dir); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { lock.Unlock(cg, nil) })
				for i := 0; b.Loop(); i++ {
					if err := cg.Apply(dir, rules[i%2]); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(rules[0])), "rules")
			})
		}
	}
}
