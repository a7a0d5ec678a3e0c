package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest/agentbin"
	"github.com/gpubook/gpubook/agent/agenttest/unitsandbox"
	"github.com/gpubook/gpubook/agent/lock/locktest"
)

// TestMain lets unitsandbox run this test binary as the set-up of a
// sandboxed command.
func TestMain(m *testing.M) {
	unitsandbox.MaybeRun()
	os.Exit(m.Run())
}

// TestShippedUnitLocks: a plain install (install.sh, as root, upgrade of an
// enrolled node) and then the agent started the way systemd starts it —
// the installed unit parsed, its sandbox reproduced (read-only /, the
// writable paths it names, /sys read-only but for /sys/fs/cgroup, private
// /tmp, no /home, its capability bounding set, no_new_privs) — on
// simulated GPUs with enforce = lock. The agent's own probe and self-check
// must claim `lock v1` / `lock v2`; the unit as shipped before
// (ProtectControlGroups=yes) must not.
func TestShippedUnitLocks(t *testing.T) {
	needRootKernel(t)
	locktest.HoldAgentPrefix(t)
	bin := agentbin.Build(t, filepath.Join(openDir(t), "gpubook-agent"))
	for _, tc := range []struct {
		name, cgroup, unitEdit, want string
	}{
		{"v1", "v1", "", "enforce: lock v1\n"},
		{"v2", "v2", "", "enforce: lock v2\n"},
		{"v1 unit as shipped before", "v1", oldUnit, "enforce: NOT LOCKED: detect (cannot lock: cgroup v1: lock: cgroup: mkdir /sys/fs/cgroup/devices/gpubook: read-only file system)"},
		{"v2 unit as shipped before", "v2", oldUnit, "enforce: NOT LOCKED: detect (cannot lock: cgroup v2: lock: cgroup: mkdir /sys/fs/cgroup/unified/gpubook: read-only file system)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := installNode(t, bin, "node = unit1\ngpu = simulated\nenforce = lock\nlock_cgroup = "+tc.cgroup+"\n")
			if tc.unitEdit != "" {
				n.editUnit(t, "ReadWritePaths=/var/lib/gpubook-agent /sys/fs/cgroup\n", tc.unitEdit)
			}
			a := n.startAgent(t)
			got := n.waitStatus(t, a, func(s string) bool {
				return strings.Contains(s, "enforce: lock v") && !strings.Contains(s, "guarding nothing") || strings.Contains(s, "NOT LOCKED")
			})
			if !strings.Contains(got, tc.want) {
				t.Errorf("gpubook-agent status:\n%s\nwant %q\nagent log:\n%s", got, tc.want, a.log())
			}
			if tc.unitEdit == "" && !strings.Contains(a.log(), "self-check passed") {
				t.Errorf("the agent claims the lock without saying its self-check passed:\n%s", a.log())
			}
		})
	}
}

// oldUnit is what the unit said before the lock had its write access.
const oldUnit = "ReadWritePaths=/var/lib/gpubook-agent\nProtectControlGroups=yes\n"

// needRootKernel skips on a laptop (needs root, mount namespaces and the
// kernel's cgroup device controllers); CI must run it.
func needRootKernel(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		skipOrFail(t, "needs root (a mount namespace over /etc and /usr/local, cgroups)")
	}
	for _, p := range []string{"/sys/fs/cgroup/devices/devices.allow", "/sys/fs/cgroup/unified/cgroup.procs", "/usr/bin/setpriv"} {
		if _, err := os.Stat(p); err != nil {
			skipOrFail(t, "this machine lacks "+p)
		}
	}
}

// installedNode is a node laid out in scratch folders (each standing in
// for a system path in the mount namespaces of its commands) after a real
// run of install.sh.
type installedNode struct {
	dir, bin string
	binds    []unitsandbox.Bind
}

// installNode runs install.sh as an upgrade of an enrolled node (the
// credential is there; systemctl is a stand-in that logs its calls) and
// adds conf to the installed agent.conf.
func installNode(t *testing.T, bin, conf string) *installedNode {
	t.Helper()
	dir := openDir(t)
	n := &installedNode{dir: dir, bin: bin}
	for _, target := range []string{"/usr/local/bin", "/etc/gpubook", "/etc/profile.d", "/etc/systemd/system", "/var/lib/gpubook-agent", "/usr/share/gpubook-agent"} {
		src := n.path(target)
		must(t, os.MkdirAll(src, 0o755))
		n.binds = append(n.binds, unitsandbox.Bind{Src: src, Dst: target})
	}
	unitsandbox.Mountpoints(t, n.binds)
	cred, _ := json.Marshal(map[string]any{"portal_url": "http://127.0.0.1:9", "node_id": 1, "node": "unit1", "credential": "gpbn_test"})
	must(t, os.WriteFile(n.path("/etc/gpubook/credential.json"), cred, 0o600))
	shims := filepath.Join(dir, "shims")
	must(t, os.MkdirAll(shims, 0o755))
	must(t, os.WriteFile(filepath.Join(shims, "systemctl"), []byte("#!/bin/sh\necho \"$*\" >>"+dir+"/systemctl.log\n"), 0o755))
	// /etc a throw-away copy: install.sh places the bash hook by rename.
	scratch := filepath.Join(dir, "scratch")
	must(t, os.Mkdir(scratch, 0o700))
	out := n.run(t, unitsandbox.Spec{Ephemeral: []string{"/etc"}, Scratch: scratch, Tmpfs: []string{"/run"}, Argv: []string{"sh", "-c", "mkdir -p /run/systemd/system && exec sh install.sh"},
		Env: []string{"PATH=" + shims + ":/usr/sbin:/usr/bin:/sbin:/bin", "GPUBOOK_AGENT_BIN=" + bin}})
	if got := readFile(t, filepath.Join(dir, "systemctl.log")); !strings.Contains(got, "enable --now gpubook-agent.service") {
		t.Fatalf("install.sh did not enable the unit (systemctl: %q)\n%s", got, out)
	}
	f, err := os.OpenFile(n.path("/etc/gpubook/agent.conf"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("\n# test\nmetrics_addr =\nsample_interval = 1s\nheartbeat_interval = 2s\n" + conf)
	must(t, err)
	must(t, f.Close())
	return n
}

// path is where system path p lives in the node's scratch folders.
func (n *installedNode) path(p string) string {
	for _, b := range n.binds {
		if p == b.Dst || strings.HasPrefix(p, b.Dst+"/") {
			return b.Src + strings.TrimPrefix(p, b.Dst)
		}
	}
	return filepath.Join(n.dir, "root", strings.ReplaceAll(strings.Trim(p, "/"), "/", "-"))
}

// editUnit replaces old by new in the installed unit.
func (n *installedNode) editUnit(t *testing.T, old, new string) {
	t.Helper()
	p := n.path("/etc/systemd/system/gpubook-agent.service")
	unit := readFile(t, p)
	if !strings.Contains(unit, old) {
		t.Fatalf("the installed unit has no %q", old)
	}
	must(t, os.WriteFile(p, []byte(strings.Replace(unit, old, new, 1)), 0o644))
}

// run runs spec on the node (its binds first) and returns its output.
func (n *installedNode) run(t *testing.T, spec unitsandbox.Spec) string {
	t.Helper()
	spec.Binds = append(append([]unitsandbox.Bind(nil), n.binds...), spec.Binds...)
	cmd, err := unitsandbox.Command(spec)
	must(t, err)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", spec.Argv, err, out)
	}
	return string(out)
}

// sandboxed is the agent running under the unit's sandbox.
type sandboxed struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (a *sandboxed) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out.Write(p)
}

func (a *sandboxed) log() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out.String()
}

// startAgent starts the installed unit's ExecStart under its sandbox, as
// systemd would; at cleanup it stops it (SIGTERM, as the unit's
// KillSignal) and undoes its lock with the installed binary's unlock.
func (n *installedNode) startAgent(t *testing.T) *sandboxed {
	t.Helper()
	unit, err := unitsandbox.ParseFile(n.path("/etc/systemd/system/gpubook-agent.service"))
	must(t, err)
	spec := unitsandbox.Spec{Binds: n.binds, Unit: &unit, Env: []string{unitsandbox.SystemdPath}}
	cmd, err := unitsandbox.Command(spec)
	must(t, err)
	a := &sandboxed{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = a, a
	must(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-a.done
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, n.bin, "unlock", "--config", "/nonexistent").CombinedOutput(); err != nil {
			t.Errorf("unlock after the test: %v\n%s", err, out)
		}
		if t.Failed() {
			t.Logf("agent log:\n%s", a.log())
		}
	})
	return a
}

// waitStatus runs the installed `gpubook-agent status` until done accepts
// its output (or 60 s pass) and returns the last output.
func (n *installedNode) waitStatus(t *testing.T, a *sandboxed, done func(string) bool) string {
	t.Helper()
	last := ""
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		select {
		case <-a.done:
			t.Fatalf("the agent exited:\n%s", a.log())
		default:
		}
		cmd, err := unitsandbox.Command(unitsandbox.Spec{Binds: n.binds, Argv: []string{"/usr/local/bin/gpubook-agent", "status"}, Env: []string{unitsandbox.SystemdPath}})
		must(t, err)
		out, _ := cmd.CombinedOutput()
		if last = string(out); done(last) {
			return last
		}
	}
	t.Fatalf("status never settled; last:\n%s\nagent log:\n%s", last, a.log())
	return ""
}
