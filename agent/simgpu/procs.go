package simgpu

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// procTree is the simulated processes' /proc-like tree and the passwd and
// group files that name their owners. The agent's real procfs resolver
// reads them, so attribution, exemption and the signal guard run the
// production code; only what they read is made up.
type procTree struct {
	dir     string
	written map[int]string
	users   string // passwd content last written
}

func (t *procTree) root() string   { return filepath.Join(t.dir, "proc") }
func (t *procTree) passwd() string { return filepath.Join(t.dir, "passwd") }
func (t *procTree) group() string  { return filepath.Join(t.dir, "group") }

// uidBase is where made-up UIDs start: above the usual ranges of local
// (1000+) accounts, below those of most directory services.
const uidBase = 20000

// HostUsers is what the simulation asks the host's name service
// (procfs.Resolver answers through NSS, or a passwd file when set).
type HostUsers interface {
	// UserID is a login's UID, when the host knows the login.
	UserID(name string) (int, bool)
	// UserName is a UID's login, or the number as text when none has it.
	UserName(uid int) string
}

// UIDs maps user names to UIDs: a name the host knows keeps its UID (a
// script line for root is root, and exempt; a directory user keeps her
// directory UID, so that the device lock and the simulation agree on who
// she is), other names get a stable made-up UID from their hash that no
// host user has, collisions resolved in name order. host may be nil.
func UIDs(names []string, host HostUsers) map[string]int {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	out := make(map[string]int, len(sorted))
	used := map[int]bool{}
	taken := func(uid int) bool {
		return used[uid] || (host != nil && host.UserName(uid) != strconv.Itoa(uid))
	}
	for _, n := range sorted {
		if _, done := out[n]; done {
			continue
		}
		if host != nil {
			if uid, ok := host.UserID(n); ok {
				used[uid], out[n] = true, uid
				continue
			}
		}
		uid := uidBase + int(hash(n)%40000)
		for taken(uid) {
			uid++
		}
		used[uid], out[n] = true, uid
	}
	return out
}

// write brings the tree in line with procs: new processes get status and
// stat files, ended ones lose their directory, and passwd/group list every
// owner (rewritten only when they change: the resolver caches by mtime).
func (t *procTree) write(procs []Proc, pids map[string]int, uids map[string]int) error {
	if err := t.writeUsers(uids); err != nil {
		return err
	}
	keep := map[int]bool{}
	for _, p := range procs {
		pid := pids[p.Key]
		keep[pid] = true
		content := fmt.Sprintf("%d/%d/%d", uids[p.User], p.Since.Unix(), p.GPU)
		if t.written[pid] == content {
			continue
		}
		if err := writeProc(t.root(), pid, uids[p.User], uint64(p.Since.Unix())*100); err != nil {
			return err
		}
		t.written[pid] = content
	}
	for pid := range t.written {
		if !keep[pid] {
			if err := os.RemoveAll(filepath.Join(t.root(), strconv.Itoa(pid))); err != nil {
				return fmt.Errorf("agent: simgpu: %w", err)
			}
			delete(t.written, pid)
		}
	}
	return nil
}

// writeProc writes PID's status (the Uid line the resolver reads) and stat
// (parent 1, no controlling terminal, so no warning is ever written to a
// real terminal; the start time tells reused PIDs apart).
func writeProc(root string, pid, uid int, startTicks uint64) error {
	dir := filepath.Join(root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("agent: simgpu: %w", err)
	}
	status := fmt.Sprintf("Name:\tsim-train\nState:\tR (running)\nPid:\t%d\nPPid:\t1\nUid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\n",
		pid, uid, uid, uid, uid, uid, uid, uid, uid)
	stat := fmt.Sprintf("%d (sim-train) R 1 %d %d 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, pid, pid, startTicks)
	if err := os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644); err != nil {
		return fmt.Errorf("agent: simgpu: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		return fmt.Errorf("agent: simgpu: %w", err)
	}
	return nil
}

func (t *procTree) writeUsers(uids map[string]int) error {
	names := make([]string, 0, len(uids))
	for n := range uids {
		names = append(names, n)
	}
	sort.Strings(names)
	var pw, gr strings.Builder
	pw.WriteString("root:x:0:0:root:/root:/bin/bash\n")
	gr.WriteString("root:x:0:\n")
	for _, n := range names {
		if uids[n] == 0 {
			continue
		}
		fmt.Fprintf(&pw, "%s:x:%d:%d:simulated:/home/%s:/bin/bash\n", n, uids[n], uids[n], n)
		fmt.Fprintf(&gr, "%s:x:%d:\n", n, uids[n])
	}
	if pw.String() == t.users {
		return nil
	}
	if err := os.WriteFile(t.passwd(), []byte(pw.String()), 0o644); err != nil {
		return fmt.Errorf("agent: simgpu: %w", err)
	}
	if err := os.WriteFile(t.group(), []byte(gr.String()), 0o644); err != nil {
		return fmt.Errorf("agent: simgpu: %w", err)
	}
	t.users = pw.String()
	return nil
}
