package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInstallDestDir: a packaging run puts every file under DESTDIR and
// touches nothing else (no enrolment, no systemctl, no root needed).
func TestInstallDestDir(t *testing.T) {
	dest := t.TempDir()
	cmd := exec.Command("sh", "install.sh")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "DESTDIR=" + dest, "GPUBOOK_AGENT_BIN=" + fakeAgent(t, "exit 0")}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	for _, f := range []string{"usr/local/bin/gpubook-agent", "etc/gpubook/agent.conf", "etc/profile.d/gpubook.sh",
		"etc/systemd/system/gpubook-agent.service", "usr/share/gpubook-agent/bash.bashrc.snippet", "usr/share/gpubook-agent/bashrc-hook.sh"} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"etc/bash.bashrc", "etc/bashrc"} {
		if _, err := os.Stat(filepath.Join(dest, f)); !os.IsNotExist(err) {
			t.Errorf("%s in a staging tree: %v; the package's post-install places the hook", f, err)
		}
	}
}

// TestInstallRefusesTokenArgument: the token on the command line shows in
// ps and the shell history; the old two-argument form is refused.
func TestInstallRefusesTokenArgument(t *testing.T) {
	cmd := exec.Command("sh", "install.sh", "https://gpubook.example.org", "gpbe_secret")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "DESTDIR=" + t.TempDir(), "GPUBOOK_AGENT_BIN=" + fakeAgent(t, "exit 0")}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "GPUBOOK_AGENT_TOKEN") {
		t.Errorf("install.sh with a token argument: err %v, output %q; want a refusal naming GPUBOOK_AGENT_TOKEN", err, out)
	}
}

// TestInstallOnRoot: a real install (root, no DESTDIR). On a host where
// systemd is not the init it finishes, says so, gives the exact command to
// start the agent under another init, and exits 0; where systemd is the
// init it enables and starts the unit. It enrols on a first install and
// whenever a token is given (the enrol page's one command), and not on an
// upgrade without a token. The install runs in
// a mount namespace where /etc, /usr/local, /usr/share and /var/lib are
// overlays whose writes land in a tmpfs (copied out at the end), and /run
// is empty (systemd's /run/systemd/system made only for the second case);
// systemctl is a stand-in that logs its calls.
func TestInstallOnRoot(t *testing.T) {
	if os.Getuid() != 0 {
		skipOrFail(t, "the install test needs root (a mount namespace over /etc and /usr)")
	}
	const started = "daemon-reload\nenable --now gpubook-agent.service\nrestart gpubook-agent.service\n"
	const enrol = "probe\nenroll --portal https://gpubook.example.org\n"
	tests := []struct {
		name          string
		systemd       bool
		enrolled      bool   // a credential is there before
		token         string // GPUBOOK_AGENT_TOKEN
		wantSystemctl string
		wantAgent     string // the agent's calls
		wantOut       []string
	}{
		{"no systemd", false, false, "gpbe_test", "", enrol, []string{"systemd was not found", "\n    /usr/local/bin/gpubook-agent run --config /etc/gpubook/agent.conf\n"}},
		{"systemd", true, false, "gpbe_test", started, enrol, []string{"journalctl -u gpubook-agent"}},
		{"upgrade", true, true, "", started, "probe\n", nil},
		{"enrol again", true, true, "gpbe_test", started, enrol, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			logs, ovl, written := filepath.Join(dir, "logs"), filepath.Join(dir, "ovl"), filepath.Join(dir, "written")
			for _, d := range []string{filepath.Join(logs, "bin"), ovl, written} {
				must(t, os.MkdirAll(d, 0o755))
			}
			systemctl := filepath.Join(logs, "bin", "systemctl")
			must(t, os.WriteFile(systemctl, []byte("#!/bin/sh\necho \"$*\" >>"+logs+"/systemctl\n"), 0o755))
			agent := fakeAgent(t, `echo "$*" >>`+logs+"/agent")
			script := "set -e\nmount -t tmpfs -o mode=0755 tmpfs /run\n"
			if tt.systemd {
				script += "mkdir -p /run/systemd/system\n"
			}
			script += "mount -t tmpfs tmpfs " + ovl + "\n"
			for _, d := range []string{"etc", "usr/local", "usr/share", "var/lib"} {
				up := ovl + "/" + strings.ReplaceAll(d, "/", "-")
				script += fmt.Sprintf("mkdir -p %[1]s/upper %[1]s/work\nmount -t overlay overlay -o lowerdir=/%[2]s,upperdir=%[1]s/upper,workdir=%[1]s/work /%[2]s\n", up, d)
			}
			if tt.enrolled {
				script += "mkdir -p /etc/gpubook && echo '{}' >/etc/gpubook/credential.json\n"
			}
			script += "rc=0; sh install.sh https://gpubook.example.org || rc=$?\n"
			script += "for d in " + ovl + "/*; do cp -a \"$d/upper\" " + written + "/\"${d##*/}\"; done\nexit $rc\n"
			cmd := exec.Command("sh", "-c", script)
			cmd.Env = []string{"PATH=" + filepath.Dir(systemctl) + ":/usr/sbin:/usr/bin:/sbin:/bin", "GPUBOOK_AGENT_BIN=" + agent, "GPUBOOK_AGENT_TOKEN=" + tt.token}
			// Go makes the new namespace's mounts private: nothing leaks out.
			cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("install.sh: %v, want exit 0\n%s", err, out)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(string(out), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if !tt.systemd && strings.Contains(string(out), "journalctl") {
				t.Errorf("without systemd the output points at journalctl:\n%s", out)
			}
			got, _ := os.ReadFile(filepath.Join(logs, "systemctl"))
			if string(got) != tt.wantSystemctl {
				t.Errorf("systemctl calls %q, want %q", got, tt.wantSystemctl)
			}
			if got := readFile(t, filepath.Join(logs, "agent")); got != tt.wantAgent {
				t.Errorf("agent calls %q, want %q", got, tt.wantAgent)
			}
			for _, f := range []string{"usr-local/bin/gpubook-agent", "etc/gpubook/agent.conf", "etc/profile.d/gpubook.sh",
				"etc/systemd/system/gpubook-agent.service", "usr-share/gpubook-agent/bashrc-hook.sh"} {
				if _, err := os.Stat(filepath.Join(written, f)); err != nil {
					t.Errorf("not installed: %v", err)
				}
			}
			if _, err := os.Stat("/etc/bash.bashrc"); err == nil && !strings.HasPrefix(readFile(t, filepath.Join(written, "etc/bash.bashrc")), "# --- gpubook") {
				t.Error("the bash hook was not placed at the top of bash.bashrc")
			}
		})
	}
}
