package lock_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/models/wire"
)

func TestMain(m *testing.M) {
	locktest.MaybeOpener()
	lock.MaybeSelfCheckChild()
	os.Exit(m.Run())
}

const aliceUID, sysUID = 20000, 500

func TestLockOnRealCgroups(t *testing.T) {
	for name, cg := range locktest.Hierarchies(fmt.Sprintf("gpubook-test-%d", os.Getpid())) {
		t.Run(name, func(t *testing.T) {
			locktest.Require(t, cg)
			t.Cleanup(func() {
				if err := lock.Unlock(cg, nil); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			})
			lockScenario(t, cg)
		})
	}
}

func lockScenario(t *testing.T, cg *lock.Cgroups) {
	n := locktest.NewNode(t, map[string]int{"alice": aliceUID, "svc": sysUID})
	alice, svc := n.Start(t, aliceUID, cg), n.Start(t, sysUID, cg)
	users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"), PIDs: map[int]bool{alice.PID(): true, svc.PID(): true}}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	gpus := make([]lock.GPU, 8)
	for i := range gpus {
		gpus[i] = lock.GPU{UUID: fmt.Sprintf("GPU-%d", i), Minor: i}
	}
	bookings := []wire.Booking{
		{ID: 1, User: "alice", GPUUUIDs: []string{"GPU-2", "GPU-5"}, StartsAt: t0.Add(-time.Hour), EndsAt: t0.Add(time.Hour)},
		{ID: 2, User: "alice", GPUUUIDs: []string{"GPU-3"}, StartsAt: t0.Add(time.Hour), EndsAt: t0.Add(2 * time.Hour)},
	}
	majors := lock.Majors{GPU: 195}
	l := lock.New(cg, "/proc", majors, nil, exempt.Default(), users, nil)
	expect := func(p *locktest.Proc, want map[string]string) {
		t.Helper()
		expectOpens(t, p, "", want)
	}

	// Before the agent acts, CUDA_VISIBLE_DEVICES is advice only: GPU 3 opens.
	expect(alice, map[string]string{n.GPU(3): "ENXIO"})
	if err := l.Sync(t0, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	wantDir, _ := cg.Dir(aliceUID)
	if got, _ := cg.Of("/proc", alice.PID()); got != wantDir {
		t.Fatalf("alice's process in %s, want %s", got, wantDir)
	}
	expect(alice, map[string]string{n.GPU(2): "ENXIO", n.GPU(5): "ENXIO", n.GPU(3): "EPERM", n.GPU(0): "EPERM",
		filepath.Join(n.Dir, "nvidiactl"): "ENXIO", "/dev/null": "OK"})
	// An exempt (system) account is never confined.
	if got, _ := cg.Of("/proc", svc.PID()); strings.HasPrefix(got, filepath.Join(cg.Root, cg.Prefix)) {
		t.Errorf("system account's process confined in %s", got)
	}
	expect(svc, map[string]string{n.GPU(3): "ENXIO"})

	// A root shell started from her session (sudo) is moved out at once.
	root := n.Start(t, 0)
	users.PIDs[root.PID()] = true
	if err := cg.Move(root.PID(), wantDir); err != nil {
		t.Fatal(err)
	}
	expect(root, map[string]string{n.GPU(3): "EPERM"})
	if err := l.Sync(t0, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expect(root, map[string]string{n.GPU(3): "ENXIO"})

	// Her cgroup deleted behind the agent's back (another unlock, a logout
	// on systemd): the next sync makes it again, with the rules.
	if err := cg.Release(wantDir); err != nil {
		t.Fatal(err)
	}
	expect(alice, map[string]string{n.GPU(3): "ENXIO"})
	if err := l.Sync(t0, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expect(alice, map[string]string{n.GPU(3): "EPERM", n.GPU(2): "ENXIO"})

	// The first booking ends and the next starts: the next sync flips both.
	if err := l.Sync(t0.Add(time.Hour), bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expect(alice, map[string]string{n.GPU(2): "EPERM", n.GPU(5): "EPERM", n.GPU(3): "ENXIO"})

	// Agent stopped: the kernel keeps the rules. A new agent reconciles
	// them from the schedule at its start.
	expect(alice, map[string]string{n.GPU(3): "ENXIO", n.GPU(2): "EPERM"})
	l2 := lock.New(cg, "/proc", majors, nil, exempt.Default(), users, nil)
	if err := l2.Sync(t0.Add(3*time.Hour), bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expect(alice, map[string]string{n.GPU(3): "EPERM", n.GPU(2): "EPERM"})

	// unlock removes everything: processes back at the root, cgroups gone.
	if err := lock.Unlock(cg, nil); err != nil {
		t.Fatal(err)
	}
	expect(alice, map[string]string{n.GPU(3): "ENXIO", n.GPU(2): "ENXIO"})
	if got, _ := cg.Of("/proc", alice.PID()); got != cg.Root {
		t.Errorf("after unlock alice's process in %s, want %s", got, cg.Root)
	}
	if _, err := os.Stat(filepath.Join(cg.Root, cg.Prefix)); !os.IsNotExist(err) {
		t.Errorf("after unlock %s still there (%v)", cg.Prefix, err)
	}
}

// TestLockOnSystemdSlices: on a cgroup2 host run by systemd the rules go on
// the user's slice, where logind put the session; nothing is moved.
func TestLockOnSystemdSlices(t *testing.T) {
	cg := lock.V2("/sys/fs/cgroup/unified", fmt.Sprintf("gpubook-test-%d", os.Getpid()), true)
	cg.Slices = fmt.Sprintf("gpubook-test-slices-%d", os.Getpid())
	locktest.Require(t, cg)
	n := locktest.NewNode(t, map[string]int{"alice": aliceUID})
	alice := n.Start(t, aliceUID)
	slice := filepath.Join(cg.Root, cg.Slices, fmt.Sprintf("user-%d.slice", aliceUID))
	if err := os.MkdirAll(slice, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cg.Move(alice.PID(), cg.Root)
		alice.Cmd.Process.Kill()
		alice.Cmd.Wait()
		for _, d := range []string{slice, filepath.Dir(slice), filepath.Join(cg.Root, cg.Prefix)} {
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	if err := cg.Move(alice.PID(), slice); err != nil { // as logind would
		t.Fatal(err)
	}
	users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"), PIDs: map[int]bool{alice.PID(): true}}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	gpus := []lock.GPU{{UUID: "GPU-2", Minor: 2}, {UUID: "GPU-3", Minor: 3}}
	bookings := []wire.Booking{{ID: 1, User: "alice", GPUUUIDs: []string{"GPU-2"}, StartsAt: t0, EndsAt: t0.Add(time.Hour)}}
	l := lock.New(cg, "/proc", lock.Majors{GPU: 195}, nil, exempt.Default(), users, nil)
	if err := l.Sync(t0, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := cg.Of("/proc", alice.PID()); got != slice {
		t.Errorf("alice's process moved to %s, want it left in %s", got, slice)
	}
	for minor, want := range map[int]string{2: "ENXIO", 3: "EPERM"} {
		if got := alice.Open(t, n.GPU(minor)); got != want {
			t.Errorf("open nvidia%d: got %s, want %s", minor, got, want)
		}
	}
	if err := lock.Unlock(cg, nil); err != nil {
		t.Fatal(err)
	}
	if got := alice.Open(t, n.GPU(3)); got != "ENXIO" {
		t.Errorf("after unlock, open nvidia3: got %s, want ENXIO", got)
	}
}

// TestProbe: on this machine kind (v1 devices controller and cgroup2 both
// mounted) the probe picks v1, as runc does on hybrid hosts, or v2 when
// asked; either is proved by the self-check on the real kernel, and nothing
// is left behind but the agent's folder.
func TestProbe(t *testing.T) {
	prefix := fmt.Sprintf("gpubook-test-p%d", os.Getpid())
	for _, tc := range []struct{ want, name string }{{"auto", "v1"}, {"v1", "v1"}, {"v2", "v2"}} {
		t.Run(tc.want, func(t *testing.T) {
			h := locktest.Hierarchies(prefix)[tc.name]
			locktest.Require(t, h)
			t.Cleanup(func() { lock.Unlock(h, nil) })
			cg, why := lock.Probe(lock.ProbeSpec{CgroupRoot: "/sys/fs/cgroup", Prefix: prefix, Want: tc.want, Majors: lock.Majors{GPU: 195}, DevDir: t.TempDir()})
			if cg == nil || cg.Name() != tc.name || why != "" {
				t.Fatalf("probe = %+v, %q; want %s", cg, why, tc.name)
			}
			if _, err := os.Stat(filepath.Join(cg.Root, prefix, "selfcheck")); !os.IsNotExist(err) {
				t.Errorf("scratch cgroup left behind (%v)", err)
			}
		})
	}
	t.Run("nothing mounted", func(t *testing.T) {
		cg, why := lock.Probe(lock.ProbeSpec{CgroupRoot: t.TempDir(), Prefix: prefix, Want: "auto", Majors: lock.Majors{GPU: 195}, DevDir: "/dev"})
		if os.Geteuid() == 0 && (cg != nil || !strings.Contains(why, "no cgroup devices controller")) {
			t.Errorf("probe of an empty folder = %+v, %q; want the reason", cg, why)
		}
	})
}

// TestSelfCheckOnTheKernel: the self-check passes on both hierarchies of
// this machine and says so plainly when its scratch device file cannot be
// made.
func TestSelfCheckOnTheKernel(t *testing.T) {
	for name, h := range locktest.Hierarchies(fmt.Sprintf("gpubook-test-sc%d", os.Getpid())) {
		t.Run(name, func(t *testing.T) {
			locktest.Require(t, h)
			t.Cleanup(func() { lock.Unlock(h, nil) })
			if err := lock.SelfCheck(h, lock.Majors{GPU: 195}, t.TempDir()); err != nil {
				t.Fatalf("self-check on the real kernel: %v", err)
			}
			if err := lock.SelfCheck(h, lock.Majors{GPU: 195}, "/proc"); err == nil || !strings.Contains(err.Error(), "scratch device folder") {
				t.Errorf("self-check with an unusable device folder: %v; want it named", err)
			}
		})
	}
}

// expectOpens has p open each path of want and checks the answer ("OK" or
// the errno's name); when names the moment in a failure's message.
func expectOpens(t *testing.T, p *locktest.Proc, when string, want map[string]string) {
	t.Helper()
	for path, w := range want {
		if got := p.Open(t, path); got != w {
			t.Errorf("%sopen %s: got %s, want %s", when, path, got, w)
		} else {
			t.Logf("%sopen %s: %s", when, path, got) // what scripts/gpucheck shows on a real GPU
		}
	}
}

// TestLoginWhileAgentDown: the rules stay in the kernel when the agent
// stops, but only processes already placed are under them. A login while
// it is down lands at the hierarchy's root on v1 and on cgroup2 without
// systemd — not confined (GPU 3 opens, ENXIO) until the agent runs again —
// while on systemd, where logind puts every new session of the user in a
// scope under her user-UID.slice, the slice's program holds for the new
// session too (EPERM). agent/README.md recommends accordingly.
func TestLoginWhileAgentDown(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	gpus := []lock.GPU{{UUID: "GPU-2", Minor: 2}, {UUID: "GPU-3", Minor: 3}}
	bookings := []wire.Booking{{ID: 1, User: "alice", GPUUUIDs: []string{"GPU-2"}, StartsAt: t0, EndsAt: t0.Add(time.Hour)}}
	for name, cg := range locktest.Hierarchies(fmt.Sprintf("gpubook-test-down%d", os.Getpid())) {
		t.Run(name+" without systemd", func(t *testing.T) {
			locktest.Require(t, cg)
			t.Cleanup(func() { lock.Unlock(cg, nil) })
			n := locktest.NewNode(t, map[string]int{"alice": aliceUID})
			first := n.Start(t, aliceUID, cg)
			users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"), PIDs: map[int]bool{first.PID(): true}}
			if err := lock.New(cg, "/proc", lock.Majors{GPU: 195}, nil, exempt.Default(), users, nil).Sync(t0, bookings, gpus, nil); err != nil {
				t.Fatal(err)
			}
			// The agent is gone now; she logs in again.
			later := n.Start(t, aliceUID, cg)
			expectOpens(t, first, "placed before the stop: ", map[string]string{n.GPU(3): "EPERM", n.GPU(2): "ENXIO"})
			expectOpens(t, later, "logged in while the agent is down: ", map[string]string{n.GPU(3): "ENXIO"})
		})
	}
	t.Run("v2 systemd", func(t *testing.T) {
		cg := lock.V2("/sys/fs/cgroup/unified", fmt.Sprintf("gpubook-test-down%d", os.Getpid()), true)
		cg.Slices = fmt.Sprintf("gpubook-test-slices-down%d", os.Getpid())
		locktest.Require(t, cg)
		n := locktest.NewNode(t, map[string]int{"alice": aliceUID})
		slice := filepath.Join(cg.Root, cg.Slices, fmt.Sprintf("user-%d.slice", aliceUID))
		scopes := []string{filepath.Join(slice, "session-1.scope"), filepath.Join(slice, "session-2.scope")}
		for _, d := range scopes {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		var procs []*locktest.Proc
		t.Cleanup(func() {
			for _, p := range procs {
				cg.Move(p.PID(), cg.Root)
				p.Cmd.Process.Kill()
				p.Cmd.Wait()
			}
			for _, d := range append(scopes, slice, filepath.Dir(slice), filepath.Join(cg.Root, cg.Prefix)) {
				if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
					t.Errorf("cleanup: %v", err)
				}
			}
		})
		login := func(scope string) *locktest.Proc { // as logind places a session
			p := n.Start(t, aliceUID)
			procs = append(procs, p)
			if err := cg.Move(p.PID(), scope); err != nil {
				t.Fatal(err)
			}
			return p
		}
		first := login(scopes[0])
		users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"), PIDs: map[int]bool{first.PID(): true}}
		if err := lock.New(cg, "/proc", lock.Majors{GPU: 195}, nil, exempt.Default(), users, nil).Sync(t0, bookings, gpus, nil); err != nil {
			t.Fatal(err)
		}
		later := login(scopes[1]) // the agent is gone now
		expectOpens(t, first, "placed before the stop: ", map[string]string{n.GPU(3): "EPERM", n.GPU(2): "ENXIO"})
		expectOpens(t, later, "new session while the agent is down: ", map[string]string{n.GPU(3): "EPERM", n.GPU(2): "ENXIO"})
		if err := lock.Unlock(cg, nil); err != nil {
			t.Fatal(err)
		}
	})
}
