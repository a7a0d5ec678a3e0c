package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/models/wire"
)

// cgroupPrefix is the folder under each hierarchy that holds the agent's
// per-user cgroups.
const cgroupPrefix = "gpubook"

// setupLock returns the device lock for enforce = lock (nil otherwise) and
// the mode for status and the heartbeat. host is the host's own /proc and
// name service (also on simulated GPUs: the lock confines real logins);
// noDevices, when set, says why there are no device files to guard;
// migRoot is the /proc-like folder whose driver/nvidia-caps/mig-minors
// numbers the MIG capability files (the host's, or the simulation's). The
// lock is claimed only after lock.Probe's self-check saw the kernel refuse
// a scratch GPU. A node that cannot lock falls back to detection and says
// why, loudly, rather than refusing to start: the schedule cache and
// logins must keep working.
func setupLock(cfg config, host *procfs.Resolver, majors lock.Majors, noDevices, migRoot string, log *slog.Logger) (daemon.Locker, string) {
	if cfg.Enforce != "lock" {
		return nil, cfg.Enforce
	}
	fail := func(why string) (daemon.Locker, string) {
		log.Error("agent: enforce = lock, but this node CANNOT LOCK; falling back to detect (bookings are not enforced by the kernel)", "reason", why)
		return nil, wire.LockCannot + why + ")"
	}
	if noDevices != "" {
		return fail(noDevices)
	}
	cg, why := lock.Probe(lock.ProbeSpec{CgroupRoot: cfg.CgroupRoot, Prefix: cgroupPrefix, Want: cfg.LockCgroup, Majors: majors, DevDir: cfg.DevDir})
	if cg == nil {
		return fail(why)
	}
	caps, err := lock.ReadMIGMinors(migRoot)
	if err != nil {
		log.Warn("agent: lock: MIG capability table unreadable; MIG instances stay closed to everyone", "err", err)
	}
	log.Info("agent: lock: self-check passed: the kernel refuses a GPU no one holds", "cgroup", cg.Name(), "root", cg.Root,
		"gpu_major", majors.GPU, "uvm_major", majors.UVM, "caps_major", majors.Caps, "mig_caps", len(caps))
	return lock.New(cg, host.Root, majors, caps, cfg.Policy.Exempt, host, log), "lock " + cg.Name()
}

// readMajors reads the device majors from the host's /proc/devices.
func readMajors(cfg config, log *slog.Logger) lock.Majors {
	majors, err := lock.ReadMajors(cfg.ProcRoot)
	if err != nil && cfg.Enforce == "lock" {
		log.Warn("agent: lock: /proc/devices unreadable; GPU major 195 assumed", "err", err)
	}
	return majors
}

// cmdUnlock removes every device rule and cgroup the agent made, on every
// hierarchy the node has, and moves their processes back to the root.
func cmdUnlock(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("unlock", "Remove every cgroup device rule the agent made (as root). Stop the daemon or set enforce = detect first, or it locks again at its next sample.", stderr, getenv)
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	cfg, err := loadConfig(*cfgPath, getenv)
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("agent: unlock: must run as root")
	}
	log := newLogger(stderr, cfg.LogLevel)
	var errs []error
	for _, cg := range hierarchies(cfg.CgroupRoot) {
		if err := lock.Unlock(cg, log); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "unlocked: cgroup %s at %s\n", cg.Name(), cg.Root)
	}
	return errors.Join(errs...)
}

// hierarchies lists every hierarchy under root that may hold the agent's
// rules, whichever one the daemon chose.
func hierarchies(root string) []*lock.Cgroups {
	var out []*lock.Cgroups
	if isFile(filepath.Join(root, "devices", "devices.allow")) {
		out = append(out, lock.V1(filepath.Join(root, "devices"), cgroupPrefix))
	}
	for _, r := range []string{root, filepath.Join(root, "unified")} {
		if isFile(filepath.Join(r, "cgroup.controllers")) {
			out = append(out, lock.V2(r, cgroupPrefix, isFile(filepath.Join(r, "user.slice")) && isFile("/run/systemd/system")))
		}
	}
	return out
}

func isFile(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
