package lock_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/models/wire"
)

// The opener: the test binary run as a non-root user inside a cgroup,
// answering each path read from stdin with the outcome of open(2).
func TestMain(m *testing.M) {
	if os.Getenv("GPUBOOK_LOCK_OPENER") == "1" {
		opener(os.Stdin, os.Stdout)
		return
	}
	os.Exit(m.Run())
}

func opener(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		fd, err := unix.Open(sc.Text(), unix.O_RDWR, 0)
		var errno syscall.Errno
		switch {
		case err == nil:
			unix.Close(fd)
			fmt.Fprintln(out, "OK")
		case errors.As(err, &errno):
			fmt.Fprintln(out, unix.ErrnoName(errno))
		default:
			fmt.Fprintln(out, err)
		}
	}
}

const aliceUID, sysUID = 20000, 500

// need skips where the kernel or the privileges are missing, and fails
// instead under CI, where this machine kind has both.
func need(t *testing.T, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("cannot run (CI=true makes this a failure): %s", why)
	}
	t.Skip(why)
}

// node is a scratch "node": GPU device files made with mknod, a passwd
// file, and the test binary where a non-root user can run it.
type node struct {
	dir, passwd, bin string
}

func newNode(t *testing.T) node {
	dir, err := os.MkdirTemp("", "gpubook-lock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n := range 8 {
		mknod(t, filepath.Join(dir, fmt.Sprintf("nvidia%d", n)), 195, n)
	}
	mknod(t, filepath.Join(dir, "nvidiactl"), 195, 255)
	n := node{dir: dir, passwd: filepath.Join(dir, "passwd"), bin: filepath.Join(dir, "opener")}
	passwd := fmt.Sprintf("root:x:0:0::/root:/bin/sh\nalice:x:%d:%d::/:/bin/sh\nsvc:x:%d:%d::/:/bin/sh\n", aliceUID, aliceUID, sysUID, sysUID)
	if err := os.WriteFile(n.passwd, []byte(passwd), 0o644); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(n.bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return n
}

func mknod(t *testing.T, path string, major, minor int) {
	t.Helper()
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(uint32(major), uint32(minor)))); err != nil {
		t.Fatalf("mknod %s: %v", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
}

// proc is a running opener.
type proc struct {
	cmd *exec.Cmd
	in  io.Writer
	out *bufio.Scanner
}

func (n node) start(t *testing.T, uid int) *proc {
	cmd := exec.Command(n.bin)
	cmd.Env = []string{"GPUBOOK_LOCK_OPENER=1", "CUDA_VISIBLE_DEVICES=0,1,2,3"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &proc{cmd: cmd, in: in, out: bufio.NewScanner(out)}
}

func (p *proc) open(t *testing.T, path string) string {
	t.Helper()
	fmt.Fprintln(p.in, path)
	if !p.out.Scan() {
		t.Fatalf("opener gone: %v", p.out.Err())
	}
	return p.out.Text()
}

// only lets the locker see the test's own processes, so that it never
// moves anything else running on the machine.
type only struct {
	*procfs.Resolver
	pids map[int]bool
}

func (o only) UID(pid int) (int, error) {
	if !o.pids[pid] {
		return 0, errors.New("not a test process")
	}
	return o.Resolver.UID(pid)
}

func hierarchies(t *testing.T, prefix string) map[string]*lock.Cgroups {
	return map[string]*lock.Cgroups{
		"v1": lock.V1("/sys/fs/cgroup/devices", prefix),
		"v2": lock.V2("/sys/fs/cgroup/unified", prefix, false),
	}
}

func available(cg *lock.Cgroups) (bool, string) {
	if os.Geteuid() != 0 {
		return false, "needs root (mknod, cgroups, setuid children)"
	}
	probe := map[int]string{1: "devices.allow", 2: "cgroup.procs"}[cg.Version]
	if _, err := os.Stat(filepath.Join(cg.Root, probe)); err != nil {
		return false, fmt.Sprintf("kernel lacks cgroup %s at %s", cg.Name(), cg.Root)
	}
	return true, ""
}

func TestLockOnRealCgroups(t *testing.T) {
	for name, cg := range hierarchies(t, fmt.Sprintf("gpubook-test-%d", os.Getpid())) {
		t.Run(name, func(t *testing.T) {
			ok, why := available(cg)
			need(t, ok, why)
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
	n := newNode(t)
	alice, svc := n.start(t, aliceUID), n.start(t, sysUID)
	for _, p := range []*proc{alice, svc} { // where a login without systemd starts
		if err := cg.Move(p.cmd.Process.Pid, cg.Root); err != nil {
			t.Fatal(err)
		}
	}
	users := only{procfs.New("/proc", n.passwd, "/etc/group"), map[int]bool{alice.cmd.Process.Pid: true, svc.cmd.Process.Pid: true}}
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
	l := lock.New(cg, "/proc", majors, exempt.Default(), users, nil)
	dev := func(m int) string { return filepath.Join(n.dir, fmt.Sprintf("nvidia%d", m)) }
	expect := func(p *proc, want map[string]string) {
		t.Helper()
		for path, w := range want {
			if got := p.open(t, path); got != w {
				t.Errorf("open %s: got %s, want %s", filepath.Base(path), got, w)
			}
		}
	}

	// Before the agent acts, CUDA_VISIBLE_DEVICES is advice only: GPU 3 opens.
	expect(alice, map[string]string{dev(3): "ENXIO"})
	if err := l.Sync(t0, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	wantDir, _ := cg.Dir(aliceUID)
	if got, _ := cg.Of("/proc", alice.cmd.Process.Pid); got != wantDir {
		t.Fatalf("alice's process in %s, want %s", got, wantDir)
	}
	expect(alice, map[string]string{dev(2): "ENXIO", dev(5): "ENXIO", dev(3): "EPERM", dev(0): "EPERM",
		filepath.Join(n.dir, "nvidiactl"): "ENXIO", "/dev/null": "OK"})
	// An exempt (system) account is never confined.
	if got, _ := cg.Of("/proc", svc.cmd.Process.Pid); strings.HasPrefix(got, filepath.Join(cg.Root, cg.Prefix)) {
		t.Errorf("system account's process confined in %s", got)
	}
	expect(svc, map[string]string{dev(3): "ENXIO"})

	// The first booking ends and the next starts: the next sync flips both.
	if err := l.Sync(t0.Add(time.Hour), bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expect(alice, map[string]string{dev(2): "EPERM", dev(5): "EPERM", dev(3): "ENXIO"})

	// Agent stopped: the kernel keeps the rules. A new agent reconciles
	// them from the schedule at its start.
	expect(alice, map[string]string{dev(3): "ENXIO", dev(2): "EPERM"})
	l2 := lock.New(cg, "/proc", majors, exempt.Default(), users, nil)
	if err := l2.Sync(t0.Add(3*time.Hour), bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	expect(alice, map[string]string{dev(3): "EPERM", dev(2): "EPERM"})

	// unlock removes everything: processes back at the root, cgroups gone.
	if err := lock.Unlock(cg, nil); err != nil {
		t.Fatal(err)
	}
	expect(alice, map[string]string{dev(3): "ENXIO", dev(2): "ENXIO"})
	if got, _ := cg.Of("/proc", alice.cmd.Process.Pid); got != cg.Root {
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
	ok, why := available(cg)
	need(t, ok, why)
	n := newNode(t)
	alice := n.start(t, aliceUID)
	slice := filepath.Join(cg.Root, cg.Slices, fmt.Sprintf("user-%d.slice", aliceUID))
	if err := os.MkdirAll(slice, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cg.Move(alice.cmd.Process.Pid, cg.Root)
		alice.cmd.Process.Kill()
		alice.cmd.Wait()
		for _, d := range []string{slice, filepath.Dir(slice), filepath.Join(cg.Root, cg.Prefix)} {
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	if err := cg.Move(alice.cmd.Process.Pid, slice); err != nil { // as logind would
		t.Fatal(err)
	}
	users := only{procfs.New("/proc", n.passwd, "/etc/group"), map[int]bool{alice.cmd.Process.Pid: true}}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	gpus := []lock.GPU{{UUID: "GPU-2", Minor: 2}, {UUID: "GPU-3", Minor: 3}}
	bookings := []wire.Booking{{ID: 1, User: "alice", GPUUUIDs: []string{"GPU-2"}, StartsAt: t0, EndsAt: t0.Add(time.Hour)}}
	l := lock.New(cg, "/proc", lock.Majors{GPU: 195}, exempt.Default(), users, nil)
	if err := l.Sync(t0, bookings, gpus, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := cg.Of("/proc", alice.cmd.Process.Pid); got != slice {
		t.Errorf("alice's process moved to %s, want it left in %s", got, slice)
	}
	for path, want := range map[string]string{"nvidia2": "ENXIO", "nvidia3": "EPERM"} {
		if got := alice.open(t, filepath.Join(n.dir, path)); got != want {
			t.Errorf("open %s: got %s, want %s", path, got, want)
		}
	}
	if err := lock.Unlock(cg, nil); err != nil {
		t.Fatal(err)
	}
	if got := alice.open(t, filepath.Join(n.dir, "nvidia3")); got != "ENXIO" {
		t.Errorf("after unlock, open nvidia3: got %s, want ENXIO", got)
	}
}
