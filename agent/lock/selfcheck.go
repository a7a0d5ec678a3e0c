package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// selfCheckEnv marks a process that SelfCheck started as its child; the
// value is "CGROUP_DIR\nDEVICE_PATH".
const selfCheckEnv = "GPUBOOK_LOCK_SELFCHECK"

// selfCheckMinor is the GPU minor of the scratch device file: the highest a
// GPU can have, so that on a node with a driver it names no real GPU.
const selfCheckMinor = maxGPUMinor

// MaybeSelfCheckChild turns the process into the self-check's child when
// SelfCheck started it: it moves itself into the scratch cgroup, opens the
// scratch GPU device file and /dev/null, prints what each open answered
// ("OK" or the errno's name, one line each) and exits. Every binary that
// probes (gpubook-agent, and test binaries) calls it first thing.
func MaybeSelfCheckChild() {
	v := os.Getenv(selfCheckEnv)
	if v == "" {
		return
	}
	dir, dev, _ := strings.Cut(v, "\n")
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		fmt.Printf("MOVE %v\n", err)
		os.Exit(0)
	}
	fmt.Println(openAnswer(dev))
	fmt.Println(openAnswer("/dev/null"))
	os.Exit(0)
}

func openAnswer(path string) string {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return "OK"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// SelfCheck proves that device rules written on cg are enforced by this
// kernel: it makes a scratch cgroup whose rules hold no GPU, a scratch GPU
// device file (major mj.GPU, minor 253) in a private folder under devDir
// (/dev: other file systems are often mounted nodev), and a child process
// (this binary again, see MaybeSelfCheckChild) that joins the cgroup and
// opens the file. The kernel must refuse it (EPERM) and still let the
// child open /dev/null. It removes everything it made.
func SelfCheck(cg *Cgroups, mj Majors, devDir string) error {
	dir := filepath.Join(cg.Root, cg.Prefix, "selfcheck")
	if err := cg.Ensure(dir); err != nil {
		return err
	}
	defer os.Remove(dir) // empty again once the child has exited
	if err := cg.Apply(dir, Rules(Allow{}, mj, nil)); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp(devDir, "gpubook-selfcheck-")
	if err != nil {
		return fmt.Errorf("lock: self-check: scratch device folder: %w", err)
	}
	defer os.RemoveAll(scratch)
	dev := filepath.Join(scratch, fmt.Sprintf("nvidia%d", selfCheckMinor))
	if err := unix.Mknod(dev, unix.S_IFCHR|0o600, int(unix.Mkdev(uint32(mj.GPU), selfCheckMinor))); err != nil {
		return fmt.Errorf("lock: self-check: mknod %s: %w", dev, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("lock: self-check: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{selfCheckEnv + "=" + dir + "\n" + dev}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("lock: self-check: child: %w %s", err, strings.TrimSpace(stderr.String()))
	}
	return judgeSelfCheck(out.String(), dev)
}

// judgeSelfCheck reads the child's two answers: the scratch GPU must be
// refused (EPERM) and /dev/null open.
func judgeSelfCheck(out, dev string) error {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	switch {
	case len(lines) == 1 && strings.HasPrefix(lines[0], "MOVE "):
		return fmt.Errorf("lock: self-check: cannot join the scratch cgroup: %s", strings.TrimPrefix(lines[0], "MOVE "))
	case len(lines) != 2:
		return fmt.Errorf("lock: self-check: unexpected answer %q", out)
	case lines[0] != "EPERM":
		return fmt.Errorf("lock: self-check: the kernel did not enforce the rules: a GPU no one holds (%s) answered %s, want EPERM", dev, lines[0])
	case lines[1] != "OK":
		return fmt.Errorf("lock: self-check: the rules refuse too much: /dev/null answered %s", lines[1])
	}
	return nil
}
