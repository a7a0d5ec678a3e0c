package docs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPortalUnit: the portal's systemd unit is well formed and keeps its
// hardening. Where systemd-analyze exists, systemd itself must read every
// line without a complaint (it warns, exit 0, about unknown keys and bad
// values, so its output must be empty); the binary is swapped for
// /bin/true, which verify needs to exist.
func TestPortalUnit(t *testing.T) {
	raw, err := os.ReadFile("deploy/gpubook.service")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			if section != "Unit" && section != "Service" && section != "Install" {
				t.Errorf("line %d: unexpected section %s", n, line)
			}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Errorf("line %d: not Key=Value in a section: %q", n, line)
			}
			keys[section+"."+k] = v
		}
	}
	for k, want := range map[string]string{
		"Service.ExecStart": "/usr/local/bin/gpubook serve", "Service.User": "gpubook", "Service.NoNewPrivileges": "yes",
		"Service.ProtectSystem": "strict", "Service.ProtectHome": "yes", "Service.PrivateDevices": "yes",
		"Service.CapabilityBoundingSet": "", "Service.StateDirectory": "gpubook", "Service.WorkingDirectory": "/var/lib/gpubook",
		"Service.MemoryDenyWriteExecute": "yes", "Install.WantedBy": "multi-user.target",
	} {
		if got, ok := keys[k]; !ok || got != want {
			t.Errorf("%s = %q (set %v), want %q", k, got, ok, want)
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not on PATH: only the keys were checked")
	}
	unit := filepath.Join(t.TempDir(), "gpubook.service")
	os.WriteFile(unit, []byte(strings.Replace(string(raw), "/usr/local/bin/gpubook", "/bin/true", 1)), 0o644)
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
