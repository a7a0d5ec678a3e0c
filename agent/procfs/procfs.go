// Package procfs maps GPU process IDs to users through a /proc-like tree and
// the system's name service, or a passwd-like file. The paths are injectable
// so that tests build a fake tree in a temporary directory instead of
// depending on the host.
package procfs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrGone means the process exited between NVML listing it and us reading
// /proc. That is normal and callers skip the process.
var ErrGone = errors.New("agent: procfs: process gone")

// Resolver answers PID → UID and UID → name. Names and groups come from
// the passwd and group files when Passwd is set (tests, simulated GPUs),
// else from the system's name service (nsswitch.conf: files, LDAP, SSSD…)
// through os/user, cached and under a time limit per lookup. The files are
// cached and reloaded when they change on disk.
type Resolver struct {
	Root   string // /proc
	Passwd string // a passwd file, or "" for the name service
	Group  string // with Passwd: a group file (default /etc/group)

	mu     sync.Mutex
	users  *table
	groups *table
	nss    *nss
}

// New returns a Resolver for the given paths: root "" is /proc; passwd ""
// means the system's name service (and group is then unused).
func New(root, passwd, group string) *Resolver {
	if root == "" {
		root = "/proc"
	}
	if passwd != "" && group == "" {
		group = "/etc/group"
	}
	return &Resolver{Root: root, Passwd: passwd, Group: group, nss: newNSS(SystemLookups())}
}

// WithLookups replaces the name service's calls and its time limit per
// lookup (0 keeps DefaultLookupTimeout): tests use it to stand in a slow or
// hung directory.
func (r *Resolver) WithLookups(l Lookups, timeout time.Duration) *Resolver {
	r.nss = newNSS(l)
	if timeout > 0 {
		r.nss.timeout = timeout
	}
	return r
}

// UID returns the real UID of pid from the "Uid:" line of <root>/pid/status.
func (r *Resolver) UID(pid int) (int, error) {
	path := filepath.Join(r.Root, strconv.Itoa(pid), "status")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrProcessDone) {
		return 0, ErrGone
	}
	if err != nil {
		return 0, fmt.Errorf("agent: procfs: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Uid:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			break
		}
		uid, err := strconv.Atoi(fields[0])
		if err != nil {
			return 0, fmt.Errorf("agent: procfs: %s: bad Uid line: %w", path, err)
		}
		return uid, nil
	}
	if err := sc.Err(); err != nil {
		// ESRCH while reading means it exited under us.
		return 0, ErrGone
	}
	return 0, fmt.Errorf("agent: procfs: %s: no Uid line", path)
}

// UserName returns the login of uid, or the number as text when neither
// the passwd file nor the name service knows it in time (containers, a
// directory that was never reached). A name the name service gave once is
// kept while it fails or hangs (see DefaultKeepGone).
func (r *Resolver) UserName(uid int) string {
	if r.Passwd == "" {
		if u, ok := r.nss.userByID(uid); ok {
			return u.Username
		}
		return strconv.Itoa(uid)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.users = r.users.refresh(r.Passwd)
	if e, ok := r.users.byID[uid]; ok {
		return e.name
	}
	return strconv.Itoa(uid)
}

// UserID returns the UID of the login name, if it is known in time.
func (r *Resolver) UserID(name string) (int, bool) {
	if r.Passwd == "" {
		u, ok := r.nss.userByName(name)
		if !ok {
			return 0, false
		}
		uid, err := strconv.Atoi(u.Uid)
		return uid, err == nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.users = r.users.refresh(r.Passwd)
	e, ok := r.users.byName[name]
	return e.id, ok
}

// UserGroups returns the names of the groups user belongs to: the primary
// group and every group that lists the user as a member (nil when the name
// service does not answer in time).
func (r *Resolver) UserGroups(user string) []string {
	if r.Passwd == "" {
		return r.nss.groups(user)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.users = r.users.refresh(r.Passwd)
	r.groups = r.groups.refresh(r.Group)
	var out []string
	primary := -1
	if e, ok := r.users.byName[user]; ok {
		primary = e.gid
	}
	for _, g := range r.groups.byID {
		if g.id == primary || slices.Contains(g.members, user) {
			out = append(out, g.name)
		}
	}
	return out
}

// Alive reports whether pid still exists; detection uses it before escalating.
func (r *Resolver) Alive(pid int) bool {
	_, err := os.Stat(filepath.Join(r.Root, strconv.Itoa(pid)))
	return err == nil
}

// Stat returns pid's parent PID and start time (clock ticks since boot,
// field 22 of <root>/pid/stat). The start time tells a process from a
// later one that got the same PID.
func (r *Resolver) Stat(pid int) (ppid int, start uint64, err error) {
	data, err := os.ReadFile(filepath.Join(r.Root, strconv.Itoa(pid), "stat"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, ErrGone
	}
	if err != nil {
		return 0, 0, fmt.Errorf("agent: procfs: %w", err)
	}
	// The command name may hold spaces and parentheses: fields start after the last ')'.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("agent: procfs: %d/stat: malformed", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("agent: procfs: %d/stat: malformed", pid)
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, fmt.Errorf("agent: procfs: %d/stat: ppid: %w", pid, err)
	}
	if len(f) > 19 {
		start, _ = strconv.ParseUint(f[19], 10, 64)
	}
	return ppid, start, nil
}

// StartTime is Stat's start time alone (detect.Owners).
func (r *Resolver) StartTime(pid int) (uint64, error) {
	_, start, err := r.Stat(pid)
	return start, err
}
