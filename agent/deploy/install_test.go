package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	cmd := exec.Command("sh", "install.sh", "https://gpubook.example.org", "gbe_secret")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "DESTDIR=" + t.TempDir(), "GPUBOOK_AGENT_BIN=" + fakeAgent(t, "exit 0")}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "GPUBOOK_AGENT_TOKEN") {
		t.Errorf("install.sh with a token argument: err %v, output %q; want a refusal naming GPUBOOK_AGENT_TOKEN", err, out)
	}
}
