package lock_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"

	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/models/wire"
)

// TestRefusalsCounted: on cgroup2 the agent's device program refuses what
// runc's did (booked GPUs reach the driver, ENXIO here; others EPERM) and
// counts each refusal per user and GPU, which Refusals hands out once.
// It replaces whatever program was on the cgroup (an older agent's, made
// with runc's library), and a new agent goes on from the kernel's counts.
func TestRefusalsCounted(t *testing.T) {
	cg := lock.V2("/sys/fs/cgroup/unified", fmt.Sprintf("gpubook-test-%d-refuse", os.Getpid()), false)
	locktest.Require(t, cg)
	t.Cleanup(func() {
		if err := lock.Unlock(cg, nil); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	n := locktest.NewNode(t, map[string]int{"alice": aliceUID})
	alice := n.Start(t, aliceUID, cg)
	users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"), PIDs: map[int]bool{alice.PID(): true}}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	gpus := make([]lock.GPU, 8)
	for i := range gpus {
		gpus[i] = lock.GPU{UUID: fmt.Sprintf("GPU-%d", i), Minor: i}
	}
	bookings := []wire.Booking{{ID: 1, User: "alice", GPUUUIDs: []string{"GPU-2", "GPU-5"}, StartsAt: t0.Add(-time.Hour), EndsAt: t0.Add(time.Hour)}}
	majors := lock.Majors{GPU: 195}

	// An older agent confined her with runc's program.
	dir, _ := cg.Dir(aliceUID)
	if err := cg.Ensure(dir); err != nil {
		t.Fatal(err)
	}
	old := lock.Rules(lock.Allow{GPUMinors: []int{2}}, majors, nil)
	if err := cgroups.DevicesSetV2(dir, &cgroups.Resources{Devices: old}); err != nil {
		t.Fatal(err)
	}
	if err := cg.Move(alice.PID(), dir); err != nil {
		t.Fatal(err)
	}
	expectOpens(t, alice, "runc's program: ", map[string]string{n.GPU(3): "EPERM", n.GPU(2): "ENXIO"})

	l := lock.New(cg, "/proc", majors, nil, exempt.Default(), users, nil)
	if err := l.Sync(t0, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expectPrograms(t, dir, []string{"gpubook_devices"})
	expectRefusals(t, l, t0, nil) // what runc's program refused was never counted
	for range 3 {
		expectOpens(t, alice, "", map[string]string{n.GPU(3): "EPERM"})
	}
	expectOpens(t, alice, "", map[string]string{n.GPU(0): "EPERM", n.GPU(2): "ENXIO", n.GPU(5): "ENXIO",
		n.Dir + "/nvidiactl": "ENXIO", "/dev/null": "OK"})
	t1 := t0.Add(10 * time.Second)
	expectRefusals(t, l, t1, []lock.Refusal{
		{User: "alice", UID: aliceUID, GPUMinor: 0, Count: 1, Since: t0, At: t1},
		{User: "alice", UID: aliceUID, GPUMinor: 3, Count: 3, Since: t0, At: t1},
	})
	t2 := t1.Add(10 * time.Second)
	expectRefusals(t, l, t2, nil) // once only

	// Her rules change (a new booking of GPU 3): the program is replaced,
	// the counts go on in the same map; GPU 3 is no longer refused.
	bookings = append(bookings, wire.Booking{ID: 2, User: "alice", GPUUUIDs: []string{"GPU-3"}, StartsAt: t2, EndsAt: t2.Add(time.Hour)})
	if err := l.Sync(t2, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expectPrograms(t, dir, []string{"gpubook_devices"})
	expectOpens(t, alice, "", map[string]string{n.GPU(3): "ENXIO", n.GPU(7): "EPERM"})
	t3 := t2.Add(10 * time.Second)
	expectRefusals(t, l, t3, []lock.Refusal{{User: "alice", UID: aliceUID, GPUMinor: 7, Count: 1, Since: t2, At: t3}})

	// A new agent (after a restart) finds the kernel's counters: what the
	// old one already read is not reported again, what follows is.
	l2 := lock.New(cg, "/proc", majors, nil, exempt.Default(), users, nil)
	if err := l2.Sync(t3, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expectPrograms(t, dir, []string{"gpubook_devices"})
	expectOpens(t, alice, "after a restart: ", map[string]string{n.GPU(6): "EPERM", n.GPU(3): "ENXIO"})
	t4 := t3.Add(10 * time.Second)
	expectRefusals(t, l2, t4, []lock.Refusal{{User: "alice", UID: aliceUID, GPUMinor: 6, Count: 1, Since: t3, At: t4}})
}

// TestRefusalsNotOnV1: the v1 devices controller refuses without a
// trace; a v1 locker reports nothing and says it cannot count.
func TestRefusalsNotOnV1(t *testing.T) {
	cg := lock.V1("/sys/fs/cgroup/devices", fmt.Sprintf("gpubook-test-%d-refuse1", os.Getpid()))
	locktest.Require(t, cg)
	t.Cleanup(func() { lock.Unlock(cg, nil) })
	n := locktest.NewNode(t, map[string]int{"alice": aliceUID})
	alice := n.Start(t, aliceUID, cg)
	users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"), PIDs: map[int]bool{alice.PID(): true}}
	l := lock.New(cg, "/proc", lock.Majors{GPU: 195}, nil, exempt.Default(), users, nil)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	if err := l.Sync(t0, nil, []lock.GPU{{UUID: "GPU-3", Minor: 3}}, nil); err != nil {
		t.Fatal(err)
	}
	expectOpens(t, alice, "", map[string]string{n.GPU(3): "EPERM"})
	if l.Counting() {
		t.Error("a v1 locker says it counts refusals")
	}
	expectRefusals(t, l, t0.Add(time.Minute), nil)
}

func expectRefusals(t *testing.T, l *lock.Locker, now time.Time, want []lock.Refusal) {
	t.Helper()
	got, err := l.Refusals(now)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("refusals at %s:\n got %+v\nwant %+v", now.Format(time.TimeOnly), got, want)
	}
}

// expectPrograms checks the names of the device programs attached to dir.
func expectPrograms(t *testing.T, dir string, want []string) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	res, err := link.QueryPrograms(link.QueryOptions{Target: fd, Attach: ebpf.AttachCGroupDevice})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ap := range res.Programs {
		p, err := ebpf.NewProgramFromID(ap.ID)
		if err != nil {
			t.Fatal(err)
		}
		info, err := p.Info()
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, info.Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("device programs on %s: got %q, want %q", dir, got, want)
	}
}
