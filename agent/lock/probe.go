package lock

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/moby/sys/userns"
)

// Probe finds the hierarchy this node can lock with, under sysCgroup
// (/sys/fs/cgroup): the v1 devices controller when mounted (as runc
// prefers on hybrid hosts), else cgroup2 (at sysCgroup or its "unified"
// mount). It proves the choice by writing open rules to a scratch cgroup.
// When nothing works it returns nil and the reason, for the log, status
// and the node page.
func Probe(sysCgroup, prefix string) (*Cgroups, string) {
	if os.Geteuid() != 0 {
		return nil, "not running as root"
	}
	if userns.RunningInUserNS() {
		// The v1 setter silently does nothing there: never claim a lock.
		return nil, "running in a user namespace (a container?): device rules cannot be set"
	}
	var cg *Cgroups
	switch v1 := filepath.Join(sysCgroup, "devices"); {
	case exists(filepath.Join(v1, "devices.allow")):
		cg = V1(v1, prefix)
	case exists(filepath.Join(sysCgroup, "cgroup.controllers")):
		cg = V2(sysCgroup, prefix, exists(filepath.Join(sysCgroup, "user.slice")) && exists("/run/systemd/system"))
	case exists(filepath.Join(sysCgroup, "unified", "cgroup.procs")):
		u := filepath.Join(sysCgroup, "unified")
		cg = V2(u, prefix, exists(filepath.Join(u, "user.slice")) && exists("/run/systemd/system"))
	default:
		return nil, "no cgroup devices controller (v1) and no cgroup2 mount under " + sysCgroup
	}
	scratch := filepath.Join(cg.Root, prefix, "probe")
	defer os.Remove(scratch)
	if err := cg.Ensure(scratch); err != nil {
		return nil, fmt.Sprintf("cgroup %s: %v", cg.Name(), err)
	}
	if err := cg.Apply(scratch, openRules()); err != nil {
		return nil, fmt.Sprintf("cgroup %s: %v", cg.Name(), err)
	}
	return cg, ""
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
