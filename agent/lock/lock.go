// Package lock turns a booking into a lock: in `enforce = lock` mode the
// agent keeps each non-exempt user's processes in a cgroup of that user
// whose device rules deny every NVIDIA GPU device file except those of the
// GPUs the user holds now (CUDA_VISIBLE_DEVICES alone is only advice).
//
// The rules stay when the agent stops or crashes (they are kernel state);
// a start reconciles them from the cached schedule, and Unlock removes
// everything the agent made. Which user may open what is a pure function
// of the schedule (AllowFor, Rules), tested without a kernel.
package lock

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	devices "github.com/opencontainers/cgroups/devices/config"

	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/models/wire"
)

// Users is what the locker needs to know about a process's owner;
// procfs.Resolver implements it.
type Users interface {
	UID(pid int) (int, error)
	UserName(uid int) string
	UserGroups(user string) []string
}

// Locker applies the rules on one hierarchy.
type Locker struct {
	cg       *Cgroups
	procRoot string
	majors   Majors
	caps     CapTable
	exempt   exempt.Rules
	users    Users
	log      *slog.Logger
	self     int

	applied map[string]string   // cgroup dir → Allow.Key() last written
	counts  map[string]*counter // cgroup dir → its refusal counters (cgroup2)
	capGPU  map[int]int         // capability minor → its GPU's minor
}

// New returns a Locker; majors come from /proc/devices (ParseDevices),
// caps from the driver's MIG table (ReadMIGMinors; nil without MIG).
func New(cg *Cgroups, procRoot string, majors Majors, caps CapTable, ex exempt.Rules, users Users, log *slog.Logger) *Locker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cg.Version == 1 {
		log.Info("agent: lock: cgroup v1 refuses opens without counting them: refused opens are not reported")
	}
	return &Locker{cg: cg, procRoot: procRoot, majors: majors, caps: caps, exempt: ex, users: users, log: log,
		self: os.Getpid(), applied: map[string]string{}, counts: map[string]*counter{}, capGPU: capGPUs(caps)}
}

// Cgroups is the hierarchy the locker writes to.
func (l *Locker) Cgroups() *Cgroups { return l.cg }

// Sync brings every user's cgroup in line with the schedule at now: the
// rules of each non-exempt user with processes on the node are (re)written
// when they changed, and their processes outside it are moved in; exempt
// processes found in one of the agent's cgroups are moved out. The first
// Sync after a start rewrites every rule (reconciling what a stopped agent
// left). migs are the node's MIG instances as NVML lists them (ids, not
// capability minors: those come from the driver's table). Errors are
// joined: one user's failure does not stop the others.
func (l *Locker) Sync(now time.Time, bookings []wire.Booking, gpus []GPU, migs []MIGInstance) error {
	byUID, err := l.scan()
	if err != nil {
		return err
	}
	migs = Resolve(migs, l.caps)
	nodeCaps := NodeCaps(gpus, migs, l.caps)
	node := nodeDevices{caps: nodeCaps, capsKey: capsKey(nodeCaps)}
	var errs []error
	for uid, pids := range byUID {
		user := l.users.UserName(uid)
		if l.exempt.Exempt(user, uid, l.users.UserGroups) {
			errs = append(errs, l.release(uid, pids))
			continue
		}
		if user == "" {
			user = strconv.Itoa(uid)
		}
		a := AllowFor(bookings, user, now, gpus, migs, l.caps)
		errs = append(errs, l.confine(now, uid, user, a, node, pids))
	}
	return errors.Join(errs...)
}

// nodeDevices is what one Sync found on the node, shared by every user:
// the capability minors closed by default (NodeCaps) and their fingerprint.
type nodeDevices struct {
	caps    []int
	capsKey string
}

// confine writes the user's rules when they changed, then moves the
// user's processes in.
func (l *Locker) confine(now time.Time, uid int, user string, a Allow, node nodeDevices, pids []int) error {
	dir, owned := l.cg.Dir(uid)
	if owned {
		if err := l.cg.Ensure(dir); err != nil {
			return err
		}
	}
	// The cgroup's identity is part of the key: a slice made anew at the
	// user's next login, or a cgroup deleted and re-created, has no rules.
	// So are the node's capability files: a new MIG instance is closed.
	if key := a.Key() + " node " + node.capsKey + "@" + l.cg.ident(dir); l.applied[dir] != key {
		if err := l.apply(now, dir, uid, user, Rules(a, l.majors, node.caps)); err != nil {
			return err
		}
		l.applied[dir] = key
		l.log.Info("agent: lock: device rules set", "user", user, "uid", uid, "gpu_minors", a.GPUMinors,
			"mig_cap_files", len(a.CapMinors), "cgroup", dir)
	}
	if !owned {
		return nil
	}
	var errs []error
	for _, pid := range pids {
		if cur, err := l.cg.Of(l.procRoot, pid); err == nil && cur != dir && Movable(l.cg.Root, l.cg.Prefix, cur) {
			errs = append(errs, l.cg.Move(pid, dir))
		}
	}
	return errors.Join(errs...)
}

// apply writes a confined user's rules; on cgroup2 their program counts
// what it refuses (Refusals). Counters that cannot be set up (a kernel
// without BPF array maps) do not stop the lock: the rules go on without.
func (l *Locker) apply(now time.Time, dir string, uid int, user string, rules []*devices.Rule) error {
	if l.cg.Version != 2 {
		return l.cg.Apply(dir, rules)
	}
	c, err := l.counterFor(dir, uid, user, now)
	if err != nil {
		l.log.Warn("agent: lock: refused opens not counted", "cgroup", dir, "err", err)
		return l.cg.Apply(dir, rules)
	}
	return l.cg.applyCounted(dir, rules, l.slot, c.m)
}

// Movable tells whether the agent may move a process out of cgroup cur:
// from the hierarchy's root, from login sessions (user.slice) and between
// its own cgroups. A process that another manager placed (a container, a
// batch job, a system service) stays where it is: moving it would undo
// that manager's limits; the unbooked-use detection still sees it.
func Movable(root, prefix, cur string) bool {
	return cur == root || within(filepath.Join(root, "user.slice"), cur) || within(filepath.Join(root, prefix), cur)
}

func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// release moves exempt processes out of the agent's cgroups (a root shell
// started from a confined session, for example); on systemd, where the rules
// sit on the user's slice, an exempt user's slice is opened once per start
// (the user may have been confined before being listed as exempt).
func (l *Locker) release(uid int, pids []int) error {
	var errs []error
	if dir, owned := l.cg.Dir(uid); !owned && l.applied[dir] != "open@"+l.cg.ident(dir) {
		errs = append(errs, l.cg.Apply(dir, openRules()))
		l.applied[dir] = "open@" + l.cg.ident(dir)
	}
	for _, pid := range pids {
		cur, err := l.cg.Of(l.procRoot, pid)
		if err == nil && within(filepath.Join(l.cg.Root, l.cg.Prefix), cur) {
			errs = append(errs, l.cg.Move(pid, l.cg.Root))
		}
	}
	return errors.Join(errs...)
}

// scan groups the node's processes by real UID, leaving out the agent
// itself and PID 1. Root's processes are listed too: one started from a
// confined session (sudo) is moved out.
func (l *Locker) scan() (map[int][]int, error) {
	ents, err := os.ReadDir(l.procRoot)
	if err != nil {
		return nil, fmt.Errorf("lock: scan: %w", err)
	}
	out := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == l.self || pid == 1 {
			continue
		}
		uid, err := l.users.UID(pid)
		if err != nil {
			continue
		}
		out[uid] = append(out[uid], pid)
	}
	return out, nil
}

// Unlock removes every rule the agent made: its own cgroups are emptied
// (processes back to the root) and deleted; on systemd user slices the
// rules are opened to allow everything.
func Unlock(cg *Cgroups, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dirs, err := cg.Owned()
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		if err := cg.Release(d); err != nil {
			errs = append(errs, err)
			continue
		}
		log.Info("agent: unlock: removed", "cgroup", d)
	}
	if cg.Systemd {
		slices, _ := filepath.Glob(filepath.Join(cg.Root, cg.Slices, "user-*.slice"))
		for _, d := range slices {
			errs = append(errs, cg.Apply(d, openRules()))
		}
	}
	if err := os.Remove(filepath.Join(cg.Root, cg.Prefix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("lock: unlock: %w", err))
	}
	return errors.Join(errs...)
}
