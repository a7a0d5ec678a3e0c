package lock

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/moby/sys/userns"
)

// ProbeSpec says where and how to look for a hierarchy that can lock.
type ProbeSpec struct {
	// CgroupRoot is where the hierarchies are mounted (/sys/fs/cgroup).
	CgroupRoot string
	// Prefix is the folder of the agent's own cgroups ("gpubook").
	Prefix string
	// Want is "auto" (the v1 devices controller when mounted, as runc
	// prefers on hybrid hosts, else cgroup2), "v1" or "v2".
	Want string
	// Majors are the device majors the rules use (ReadMajors).
	Majors Majors
	// DevDir is where the self-check makes its scratch device file (/dev).
	DevDir string
}

// Probe finds the hierarchy this node can lock with and proves it with
// SelfCheck: rules written to a scratch cgroup must make the kernel refuse
// a scratch GPU device file. When nothing works it returns nil and the
// reason, for the log, status and the node page.
func Probe(p ProbeSpec) (*Cgroups, string) {
	if os.Geteuid() != 0 {
		return nil, "not running as root"
	}
	if userns.RunningInUserNS() {
		// The v1 setter silently does nothing there: never claim a lock.
		return nil, "running in a user namespace (a container?): device rules cannot be set"
	}
	cg, why := find(p.CgroupRoot, p.Prefix, p.Want)
	if cg == nil {
		return nil, why
	}
	if err := SelfCheck(cg, p.Majors, p.DevDir); err != nil {
		return nil, fmt.Sprintf("cgroup %s: %v", cg.Name(), err)
	}
	return cg, ""
}

// find picks the hierarchy under sysCgroup that want asks for.
func find(sysCgroup, prefix, want string) (*Cgroups, string) {
	v1 := filepath.Join(sysCgroup, "devices")
	hasV1 := exists(filepath.Join(v1, "devices.allow"))
	v2 := ""
	switch {
	case exists(filepath.Join(sysCgroup, "cgroup.controllers")):
		v2 = sysCgroup
	case exists(filepath.Join(sysCgroup, "unified", "cgroup.procs")):
		v2 = filepath.Join(sysCgroup, "unified")
	}
	switch {
	case hasV1 && want != "v2":
		return V1(v1, prefix), ""
	case v2 != "" && want != "v1":
		return V2(v2, prefix, exists(filepath.Join(v2, "user.slice")) && exists("/run/systemd/system")), ""
	case want == "v1":
		return nil, "lock_cgroup = v1, but no cgroup v1 devices controller is mounted under " + sysCgroup
	case want == "v2":
		return nil, "lock_cgroup = v2, but no cgroup2 mount under " + sysCgroup
	}
	return nil, "no cgroup devices controller (v1) and no cgroup2 mount under " + sysCgroup
}

// ReadMajors reads /proc/devices under procRoot.
func ReadMajors(procRoot string) (Majors, error) {
	f, err := os.Open(filepath.Join(procRoot, "devices"))
	if err != nil {
		return Majors{GPU: nvidiaMajor}, fmt.Errorf("lock: %w", err)
	}
	defer f.Close()
	return ParseDevices(f)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
