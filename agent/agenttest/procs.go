package agenttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Users of the fixture's passwd file.
const (
	UIDRoot  = 0
	UIDGdm   = 120
	UIDAlice = 1001
	UIDBob   = 1002
	UIDCarol = 1003 // member of group gpuadmins
)

// Procs is a /proc-like tree and passwd/group files in a temp directory.
type Procs struct {
	Root, Passwd, Group string
}

// NewProcs creates the tree with the fixture users and no processes.
func NewProcs(t testing.TB) *Procs {
	t.Helper()
	dir := t.TempDir()
	p := &Procs{Root: filepath.Join(dir, "proc"), Passwd: filepath.Join(dir, "passwd"), Group: filepath.Join(dir, "group")}
	must(t, os.MkdirAll(p.Root, 0o755))
	must(t, os.WriteFile(p.Passwd, []byte("root:x:0:0:root:/root:/bin/bash\n"+
		"gdm:x:120:120:Gnome Display Manager:/var/lib/gdm3:/bin/false\n"+
		"alice:x:1001:1001::/home/alice:/bin/bash\n"+
		"bob:x:1002:1002::/home/bob:/bin/bash\n"+
		"carol:x:1003:1003::/home/carol:/bin/bash\n"), 0o644))
	must(t, os.WriteFile(p.Group, []byte("root:x:0:\nalice:x:1001:\nbob:x:1002:\ncarol:x:1003:\ngpuadmins:x:2000:carol\n"), 0o644))
	return p
}

// Add creates /proc/PID/status (and a stat with pty tty) owned by uid,
// started at clock tick 1000, child of PID 1.
func (p *Procs) Add(t testing.TB, pid, uid int) {
	t.Helper()
	p.AddStarted(t, pid, uid, 1, 1000)
}

// AddStarted is Add with the parent PID and start time given: a PID reused
// by a later process, or a child of the agent.
func (p *Procs) AddStarted(t testing.TB, pid, uid, ppid int, start uint64) {
	t.Helper()
	dir := filepath.Join(p.Root, strconv.Itoa(pid))
	must(t, os.MkdirAll(dir, 0o755))
	status := fmt.Sprintf("Name:\tpython3\nState:\tR (running)\nPid:\t%d\nUid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\n", pid, uid, uid, uid, uid, uid, uid, uid, uid)
	must(t, os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644))
	// tty_nr 34817 = major 136, minor 1 → /dev/pts/1
	stat := fmt.Sprintf("%d (python3 train.py) R %d %d %d 34817 0 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0", pid, ppid, pid, pid, start)
	must(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644))
}

// Remove deletes PID from the tree, as if it exited.
func (p *Procs) Remove(t testing.TB, pid int) {
	t.Helper()
	must(t, os.RemoveAll(filepath.Join(p.Root, strconv.Itoa(pid))))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
