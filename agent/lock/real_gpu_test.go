//go:build gpudevice

// The lock on a node with real NVIDIA GPUs and driver: built only with
// -tags gpudevice, for a machine that has them (CI has none):
//
//	go test -c -tags gpudevice -o lock.test ./agent/lock/ && sudo ./lock.test -test.v -test.run RealGPU
package lock_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/models/wire"
)

// TestLockOnRealGPUs: on the hierarchy the agent would choose (Probe), a
// user's process opens the real /dev/nvidiaN of her booking and is refused
// every other GPU; when the booking ends the next sync refuses hers too,
// the control devices stay open, and unlock lifts every rule.
func TestLockOnRealGPUs(t *testing.T) {
	paths, _ := filepath.Glob("/dev/nvidia[0-9]*")
	var minors []int
	for _, p := range paths {
		if m, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "nvidia")); err == nil {
			minors = append(minors, m)
		}
	}
	sort.Ints(minors)
	if len(minors) == 0 {
		t.Skip("no /dev/nvidiaN on this machine")
	}
	majors, err := lock.ReadMajors("/proc")
	if err != nil {
		t.Fatal(err)
	}
	cg, why := lock.Probe(lock.ProbeSpec{CgroupRoot: "/sys/fs/cgroup", Prefix: fmt.Sprintf("gpubook-realgpu-%d", os.Getpid()),
		Want: "auto", Majors: majors, DevDir: "/dev"})
	if cg == nil {
		t.Skipf("the agent could not lock here: %s", why)
	}
	t.Logf("hierarchy %s at %s; GPUs at minors %v", cg.Name(), cg.Root, minors)
	t.Cleanup(func() {
		if err := lock.Unlock(cg, nil); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	n := locktest.NewNode(t, map[string]int{"alice": aliceUID})
	alice := n.Start(t, aliceUID, cg)
	users := locktest.Only{Resolver: procfs.New("/proc", n.Passwd, "/etc/group"), PIDs: map[int]bool{alice.PID(): true}}
	gpus := make([]lock.GPU, len(minors))
	for i, m := range minors {
		gpus[i] = lock.GPU{UUID: fmt.Sprintf("GPU-%d", m), Minor: m}
	}
	mine := minors[0]
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	bookings := []wire.Booking{{ID: 1, User: "alice", GPUUUIDs: []string{fmt.Sprintf("GPU-%d", mine)},
		StartsAt: t0.Add(-time.Hour), EndsAt: t0.Add(time.Hour)}}
	dev := func(m int) string { return fmt.Sprintf("/dev/nvidia%d", m) }
	expect := func(when string, want map[string]string) {
		t.Helper()
		expectOpens(t, alice, when+": ", want)
	}
	expect("before the agent acts", map[string]string{dev(mine): "OK"})
	l := lock.New(cg, "/proc", majors, nil, exempt.Default(), users, nil)
	if err := l.Sync(t0, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{dev(mine): "OK", "/dev/nvidiactl": "OK"}
	for _, m := range minors[1:] {
		want[dev(m)] = "EPERM"
	}
	expect("during her booking", want)
	if err := l.Sync(t0.Add(2*time.Hour), bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expect("after her booking", map[string]string{dev(mine): "EPERM", "/dev/nvidiactl": "OK"})
	if err := lock.Unlock(cg, nil); err != nil {
		t.Fatal(err)
	}
	expect("after unlock", map[string]string{dev(mine): "OK"})
}
