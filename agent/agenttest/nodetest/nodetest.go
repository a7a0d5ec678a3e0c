// Package nodetest is a GPU node installed the documented way, for tests
// that run what a lab installs: agent/deploy/install.sh as root, then the
// installed unit's ExecStart under the unit's own sandbox (unitsandbox),
// with the paths the install writes standing in scratch folders (each
// bound over its system path in the namespaces of the node's commands),
// so nothing on the machine changes. A test package that uses it calls
// unitsandbox.MaybeRun first thing in its TestMain.
package nodetest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest/unitsandbox"
)

// Node is an installed node.
type Node struct {
	// Dir is the node's scratch folder; Bin the agent binary installed.
	Dir, Bin string
	// Binds lay the node out: install.sh's targets, and what Install was
	// given (nsswitch.conf, say).
	Binds []unitsandbox.Bind
}

// Install is what an admin runs: `install.sh ARGS...` from deployDir (the
// repository's agent/deploy), as root, with the agent binary bin next to
// it and env (GPUBOOK_AGENT_TOKEN, say). /etc is a throw-away copy during
// the install (it places the bash hook by rename); what it installs under
// /etc/gpubook, /etc/profile.d, /etc/systemd/system, /usr/local/bin,
// /usr/share/gpubook-agent and /var/lib/gpubook-agent stays in the node's
// folders. systemctl is a stand-in that logs its calls (this machine has
// no systemd): the test then starts the unit itself (StartAgent). binds
// are laid out first; credential, when set, is written as an enrolled
// node's (an upgrade).
func Install(t testing.TB, bin, deployDir string, binds []unitsandbox.Bind, credential []byte, args, env []string) *Node {
	t.Helper()
	dir := openDir(t)
	n := &Node{Dir: dir, Bin: bin, Binds: append([]unitsandbox.Bind(nil), binds...)}
	for _, target := range []string{"/usr/local/bin", "/etc/gpubook", "/etc/profile.d", "/etc/systemd/system", "/var/lib/gpubook-agent", "/usr/share/gpubook-agent"} {
		src := filepath.Join(dir, strings.ReplaceAll(strings.Trim(target, "/"), "/", "-"))
		must(t, os.MkdirAll(src, 0o755))
		n.Binds = append(n.Binds, unitsandbox.Bind{Src: src, Dst: target})
	}
	unitsandbox.Mountpoints(t, n.Binds)
	if credential != nil {
		must(t, os.WriteFile(n.Path("/etc/gpubook/credential.json"), credential, 0o600))
	}
	shims := filepath.Join(dir, "shims")
	must(t, os.MkdirAll(shims, 0o755))
	must(t, os.WriteFile(filepath.Join(shims, "systemctl"), []byte("#!/bin/sh\necho \"$*\" >>"+dir+"/systemctl.log\n"), 0o755))
	scratch := filepath.Join(dir, "scratch")
	must(t, os.Mkdir(scratch, 0o700))
	abs, err := filepath.Abs(filepath.Join(deployDir, "install.sh"))
	must(t, err)
	out := n.Run(t, unitsandbox.Spec{Ephemeral: []string{"/etc"}, Scratch: scratch, Tmpfs: []string{"/run"},
		Argv: append([]string{"sh", "-c", `mkdir -p /run/systemd/system && exec sh "$0" "$@"`, abs}, args...),
		Env:  append([]string{"PATH=" + shims + ":/usr/sbin:/usr/bin:/sbin:/bin", "GPUBOOK_AGENT_BIN=" + bin}, env...)})
	if got, _ := os.ReadFile(filepath.Join(dir, "systemctl.log")); !strings.Contains(string(got), "enable --now gpubook-agent.service") {
		t.Fatalf("install.sh did not enable the unit (systemctl: %q)\n%s", got, out)
	}
	return n
}

// openDir is a temporary folder others may read (the node's users too).
func openDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		must(t, os.Chmod(d, 0o755))
	}
	return dir
}

// Path is where system path p lives in the node's folders.
func (n *Node) Path(p string) string {
	for _, b := range n.Binds {
		if p == b.Dst || strings.HasPrefix(p, b.Dst+"/") {
			return b.Src + strings.TrimPrefix(p, b.Dst)
		}
	}
	t := strings.ReplaceAll(strings.Trim(p, "/"), "/", "-")
	return filepath.Join(n.Dir, "unbound", t)
}

// AppendConf adds lines to the installed agent.conf.
func (n *Node) AppendConf(t testing.TB, conf string) {
	t.Helper()
	f, err := os.OpenFile(n.Path("/etc/gpubook/agent.conf"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("\n# test\n" + conf)
	must(t, err)
	must(t, f.Close())
}

// EditUnit replaces old by new in the installed unit.
func (n *Node) EditUnit(t testing.TB, old, new string) {
	t.Helper()
	p := n.Path("/etc/systemd/system/gpubook-agent.service")
	b, err := os.ReadFile(p)
	must(t, err)
	if !strings.Contains(string(b), old) {
		t.Fatalf("the installed unit has no %q", old)
	}
	must(t, os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644))
}

// Command is spec on the node (its binds laid out first).
func (n *Node) Command(t testing.TB, spec unitsandbox.Spec) *exec.Cmd {
	t.Helper()
	spec.Binds = append(append([]unitsandbox.Bind(nil), n.Binds...), spec.Binds...)
	cmd, err := unitsandbox.Command(spec)
	must(t, err)
	return cmd
}

// Run runs spec on the node and returns its output; it must succeed.
func (n *Node) Run(t testing.TB, spec unitsandbox.Spec) string {
	t.Helper()
	out, err := n.Command(t, spec).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", spec.Argv, err, out)
	}
	return string(out)
}

// Agent is the agent running under the unit's sandbox.
type Agent struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (a *Agent) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out.Write(p)
}

// Log is what the agent wrote so far.
func (a *Agent) Log() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out.String()
}

// Stop sends SIGTERM (the unit's KillSignal) and waits for the exit.
func (a *Agent) Stop() {
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(20 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

// StartAgent starts the installed unit's ExecStart under its sandbox, as
// systemd would. At cleanup it stops it and undoes its lock with the
// installed binary's `unlock`.
func (n *Node) StartAgent(t testing.TB) *Agent {
	t.Helper()
	unit, err := unitsandbox.ParseFile(n.Path("/etc/systemd/system/gpubook-agent.service"))
	must(t, err)
	cmd := n.Command(t, unitsandbox.Spec{Unit: &unit, Env: []string{unitsandbox.SystemdPath}})
	a := &Agent{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = a, a
	must(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		a.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, n.Bin, "unlock", "--config", "/nonexistent").CombinedOutput(); err != nil {
			t.Errorf("unlock after the test: %v\n%s", err, out)
		}
		if t.Failed() {
			t.Logf("agent log:\n%s", a.Log())
		}
	})
	return a
}

// WaitStatus runs the installed `gpubook-agent status` until done accepts
// its output (or 60 s pass) and returns the last output.
func (n *Node) WaitStatus(t testing.TB, a *Agent, done func(string) bool) string {
	t.Helper()
	last := ""
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		select {
		case <-a.done:
			t.Fatalf("the agent exited:\n%s", a.Log())
		default:
		}
		out, _ := n.Command(t, unitsandbox.Spec{Argv: []string{"/usr/local/bin/gpubook-agent", "status"}, Env: []string{unitsandbox.SystemdPath}}).CombinedOutput()
		if last = string(out); done(last) {
			return last
		}
	}
	t.Fatalf("status never settled; last:\n%s\nagent log:\n%s", last, a.Log())
	return ""
}

// Locked reports whether status output has settled: the lock active
// ("enforce: lock v1"), or the node unable to lock ("NOT LOCKED: detect
// (cannot lock: …)"). A lock still guarding nothing ("NOT LOCKED: lock v1
// (guarding nothing: …)", before the first sample) has not settled.
func Locked(status string) bool {
	return strings.Contains(status, "enforce: lock v") || strings.Contains(status, "enforce: NOT LOCKED: detect (cannot lock")
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
