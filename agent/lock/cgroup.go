package lock

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/opencontainers/cgroups"
	_ "github.com/opencontainers/cgroups/devices" // registers the v1 device setter
	devices "github.com/opencontainers/cgroups/devices/config"
)

// Cgroups is one cgroup hierarchy that can hold device rules: the v1
// devices controller (devices.allow/devices.deny) or cgroup2 (a device
// eBPF program per cgroup, the agent's own: devprog.go).
type Cgroups struct {
	// Version is 1 or 2.
	Version int
	// Root is the hierarchy's mount: /sys/fs/cgroup/devices (v1),
	// /sys/fs/cgroup or /sys/fs/cgroup/unified (v2).
	Root string
	// Prefix is the folder under Root that holds the agent's own cgroups
	// ("gpubook"); tests use a name of their own.
	Prefix string
	// Systemd: on a cgroup2 host run by systemd the rules go on the user's
	// user-UID.slice, where logind already places every session; the agent
	// then moves nothing.
	Systemd bool
	// Slices is the folder under Root that holds the user slices
	// ("user.slice"); tests use a name of their own.
	Slices string
}

// V1 is the v1 devices hierarchy mounted at root.
func V1(root, prefix string) *Cgroups { return &Cgroups{Version: 1, Root: root, Prefix: prefix} }

// V2 is the cgroup2 hierarchy mounted at root; systemd says whether its
// user slices are used.
func V2(root, prefix string, systemd bool) *Cgroups {
	return &Cgroups{Version: 2, Root: root, Prefix: prefix, Systemd: systemd, Slices: "user.slice"}
}

// Name is what status and the node page show: "v1", "v2" or "v2 systemd".
func (c *Cgroups) Name() string {
	if c.Systemd {
		return "v2 systemd"
	}
	return "v" + strconv.Itoa(c.Version)
}

// Dir returns the cgroup that confines uid and whether the agent made it
// (and so moves processes into it and deletes it on unlock).
func (c *Cgroups) Dir(uid int) (dir string, owned bool) {
	if c.Systemd {
		d := filepath.Join(c.Root, c.Slices, fmt.Sprintf("user-%d.slice", uid))
		if _, err := os.Stat(d); err == nil {
			return d, false
		}
	}
	return filepath.Join(c.Root, c.Prefix, fmt.Sprintf("uid-%d", uid)), true
}

// Ensure creates the agent's cgroup for uid when it is one of its own.
func (c *Cgroups) Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lock: cgroup: %w", err)
	}
	return nil
}

// ident tells one cgroup directory from a later one at the same path (its
// inode); "" when it cannot be read.
func (c *Cgroups) ident(dir string) string {
	fi, err := os.Stat(dir)
	if err != nil {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return strconv.FormatUint(st.Ino, 10)
	}
	return ""
}

// Apply replaces the device rules of dir with rules.
func (c *Cgroups) Apply(dir string, rules []*devices.Rule) error {
	return c.applyCounted(dir, rules, nil, nil)
}

// applyCounted replaces the device rules of dir with rules; on cgroup2
// with counts, each refused open also adds one to counts at the slot that
// slot gives (devprog.go). v1 has no way to count: its rules are written
// with runc's library as before.
func (c *Cgroups) applyCounted(dir string, rules []*devices.Rule, slot func(major, minor int64) int, counts *ebpf.Map) error {
	var err error
	if c.Version == 1 {
		err = cgroups.DevicesSetV1(dir, &cgroups.Resources{Devices: rules})
	} else {
		var insns asm.Instructions
		if insns, err = deviceProgram(rules, slot, counts); err == nil {
			err = attachDeviceProgram(dir, insns)
		}
	}
	if err != nil {
		return fmt.Errorf("lock: cgroup %s: device rules: %w", dir, err)
	}
	return nil
}

// Move puts pid into dir (an ESRCH for a process that just ended is not
// an error).
func (c *Cgroups) Move(pid int, dir string) error {
	err := cgroups.WriteFile(dir, "cgroup.procs", strconv.Itoa(pid))
	if err != nil && !errors.Is(err, os.ErrProcessDone) && !strings.Contains(err.Error(), "no such process") {
		return fmt.Errorf("lock: move %d to %s: %w", pid, dir, err)
	}
	return nil
}

// Of returns the cgroup directory that pid is in on this hierarchy, read
// from procRoot/PID/cgroup.
func (c *Cgroups) Of(procRoot string, pid int) (string, error) {
	f, err := os.Open(filepath.Join(procRoot, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if (c.Version == 2 && parts[0] == "0" && parts[1] == "") ||
			(c.Version == 1 && hasController(parts[1], "devices")) {
			return filepath.Join(c.Root, parts[2]), nil
		}
	}
	return "", fmt.Errorf("lock: %d: no %s cgroup", pid, c.Name())
}

func hasController(list, name string) bool {
	for _, s := range strings.Split(list, ",") {
		if s == name {
			return true
		}
	}
	return false
}

// Owned lists the agent's own cgroups (one per confined user).
func (c *Cgroups) Owned() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(c.Root, c.Prefix))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "uid-") {
			out = append(out, filepath.Join(c.Root, c.Prefix, e.Name()))
		}
	}
	return out, nil
}

// Release moves every process of one of the agent's cgroups back to the
// hierarchy's root and deletes the cgroup (its rules go with it).
func (c *Cgroups) Release(dir string) error {
	for range 5 { // processes forked while moving are moved on the next pass
		pids, err := readPids(dir)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if err := c.Move(pid, c.Root); err != nil {
				return err
			}
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("lock: remove %s: %w", dir, err)
	}
	return nil
}

func readPids(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids, nil
}
