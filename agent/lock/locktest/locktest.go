// Package locktest runs device-lock tests on the real kernel: GPU device
// files made with mknod in a scratch folder, and "opener" child processes
// that run as a non-root user and report what open(2) answers. A test
// package that uses it calls MaybeOpener first thing in its TestMain.
package locktest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/procfs"
)

const openerEnv = "GPUBOOK_LOCK_OPENER"

// MaybeOpener turns the test binary into the opener when started as one:
// it answers each path read from stdin with OK or the errno name of
// open(path, O_RDWR), then exits.
func MaybeOpener() {
	if os.Getenv(openerEnv) != "1" {
		return
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fd, err := unix.Open(sc.Text(), unix.O_RDWR, 0)
		var errno syscall.Errno
		switch {
		case err == nil:
			unix.Close(fd)
			fmt.Println("OK")
		case errors.As(err, &errno):
			fmt.Println(unix.ErrnoName(errno))
		default:
			fmt.Println(err)
		}
	}
	os.Exit(0)
}

// Need skips where the kernel or the privileges are missing, and fails
// instead under CI (CI=true), whose machine kind has both.
func Need(t testing.TB, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("cannot run (CI=true makes this a failure): %s", why)
	}
	t.Skip(why)
}

// Available tells whether cg's hierarchy is there and usable by this process.
func Available(cg *lock.Cgroups) (bool, string) {
	if os.Geteuid() != 0 {
		return false, "needs root (mknod, cgroups, setuid children)"
	}
	probe := map[int]string{1: "devices.allow", 2: "cgroup.procs"}[cg.Version]
	if _, err := os.Stat(filepath.Join(cg.Root, probe)); err != nil {
		return false, fmt.Sprintf("kernel lacks cgroup %s at %s", cg.Name(), cg.Root)
	}
	return true, ""
}

// Hierarchies are the v1 devices controller and the cgroup2 mount of this
// machine kind, with the agent's folder named prefix.
func Hierarchies(prefix string) map[string]*lock.Cgroups {
	return map[string]*lock.Cgroups{
		"v1": lock.V1("/sys/fs/cgroup/devices", prefix),
		"v2": lock.V2("/sys/fs/cgroup/unified", prefix, false),
	}
}

// Node is a scratch node: /dev/nvidia0–7 and nvidiactl made with mknod in
// Dir, a passwd file naming the users, and the test binary where a
// non-root user can run it.
type Node struct {
	Dir, Passwd, bin string
}

// NewNode makes the node; users maps names to UIDs.
func NewNode(t testing.TB, users map[string]int) Node {
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
	n := Node{Dir: dir, Passwd: filepath.Join(dir, "passwd"), bin: filepath.Join(dir, "opener")}
	passwd := "root:x:0:0::/root:/bin/sh\n"
	for name, uid := range users {
		passwd += fmt.Sprintf("%s:x:%d:%d::/:/bin/sh\n", name, uid, uid)
	}
	if err := os.WriteFile(n.Passwd, []byte(passwd), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(n.bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return n
}

// GPU is the path of /dev/nvidiaMINOR on the node.
func (n Node) GPU(minor int) string { return filepath.Join(n.Dir, fmt.Sprintf("nvidia%d", minor)) }

func mknod(t testing.TB, path string, major, minor int) {
	t.Helper()
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(uint32(major), uint32(minor)))); err != nil {
		t.Fatalf("mknod %s: %v", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
}

// Proc is a running opener.
type Proc struct {
	Cmd *exec.Cmd
	in  io.Writer
	out *bufio.Scanner
}

// Start runs an opener as uid, with CUDA_VISIBLE_DEVICES=0,1,2,3 as a user
// who ignores their booking would set it, and moves it to the root of
// every cgroup given (where a login starts without systemd).
func (n Node) Start(t testing.TB, uid int, cgs ...*lock.Cgroups) *Proc {
	cmd := exec.Command(n.bin)
	cmd.Env = []string{openerEnv + "=1", "CUDA_VISIBLE_DEVICES=0,1,2,3"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for _, cg := range cgs {
		if err := cg.Move(cmd.Process.Pid, cg.Root); err != nil {
			t.Fatal(err)
		}
	}
	return &Proc{Cmd: cmd, in: in, out: bufio.NewScanner(out)}
}

// PID is the opener's PID.
func (p *Proc) PID() int { return p.Cmd.Process.Pid }

// Open asks the opener to open path and returns "OK" or the errno name.
func (p *Proc) Open(t testing.TB, path string) string {
	t.Helper()
	fmt.Fprintln(p.in, path)
	if !p.out.Scan() {
		t.Fatalf("opener gone: %v", p.out.Err())
	}
	return p.out.Text()
}

// Only lets a locker see the test's own processes, so that it never moves
// anything else running on the machine.
type Only struct {
	*procfs.Resolver
	PIDs map[int]bool
}

// UID answers for the test's processes only.
func (o Only) UID(pid int) (int, error) {
	if !o.PIDs[pid] {
		return 0, errors.New("not a test process")
	}
	return o.Resolver.UID(pid)
}

// Require is Need for cg's hierarchy.
func Require(t testing.TB, cg *lock.Cgroups) {
	t.Helper()
	ok, why := Available(cg)
	Need(t, ok, why)
	HoldAgentPrefix(t)
}

// MIGMinors is /proc/driver/nvidia-caps/mig-minors as the driver writes it
// for a node of gpus GPUs: "config 1", "monitor 2", then for each GPU minor
// g, GPU instance 0–14 and compute instance 0–7, the access capabilities
// numbered from 3 on (gpu0/gi1/access 12, gpu0/gi1/ci0/access 13, …).
func MIGMinors(gpus int) string {
	b := []byte("config 1\nmonitor 2\n")
	m := 3
	for g := range gpus {
		for gi := range 15 {
			b = fmt.Appendf(b, "gpu%d/gi%d/access %d\n", g, gi, m)
			m++
			for ci := range 8 {
				b = fmt.Appendf(b, "gpu%d/gi%d/ci%d/access %d\n", g, gi, ci, m)
				m++
			}
		}
	}
	return string(b)
}

// CapMinor is the minor MIGMinors gives to GPU g's GPU instance gi
// (ci = -1) or to its compute instance ci.
func CapMinor(g, gi, ci int) int {
	return 3 + 135*g + 9*gi + ci + 1
}

// Caps makes /dev/nvidia-caps/nvidia-capMINOR files for the minors given,
// with major, in the node's nvidia-caps folder, and returns a function
// that gives a minor's path.
func (n Node) Caps(t testing.TB, major int, minors ...int) func(minor int) string {
	t.Helper()
	dir := filepath.Join(n.Dir, "nvidia-caps")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := func(m int) string { return filepath.Join(dir, fmt.Sprintf("nvidia-cap%d", m)) }
	for _, m := range minors {
		mknod(t, path(m), major, m)
	}
	return path
}

// FreeMajor returns a character major from the kernel's dynamic range that
// /proc/devices does not list, for capability files no driver answers
// (open gets ENXIO once past the cgroup), as nvidia-caps' dynamic one.
func FreeMajor(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile("/proc/devices")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			used[f[0]] = true
		}
	}
	for m := 511; m >= 384; m-- {
		if !used[strconv.Itoa(m)] {
			return m
		}
	}
	t.Fatal("no free character major in 384–511")
	return 0
}

// HoldAgentPrefix makes the caller's process the only one on this machine
// whose tests touch the agent's cgroups until the test ends: a real agent
// with enforce = lock confines every login process it finds, and
// `gpubook-agent unlock` empties the agent's folder ("gpubook"), so such
// tests must not overlap each other or the kernel lock tests (go test runs
// packages in parallel). It blocks on a file lock shared by every package;
// within one process it is re-entrant (subtests of a holder pass through).
func HoldAgentPrefix(t testing.TB) {
	t.Helper()
	held.Lock()
	defer held.Unlock()
	if held.count == 0 {
		f, err := os.OpenFile(filepath.Join(os.TempDir(), "gpubook-agent-cgroup-prefix.lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			t.Fatal(err)
		}
		held.file = f
	}
	held.count++
	t.Cleanup(func() {
		held.Lock()
		defer held.Unlock()
		if held.count--; held.count == 0 {
			held.file.Close() // closing releases the lock
		}
	})
}

// held is this process's hold of the file lock.
var held struct {
	sync.Mutex
	count int
	file  *os.File
}
