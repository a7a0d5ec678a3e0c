// Package deploy holds the files an admin installs on a node; this test
// proves the shell hooks never break a login, whatever the binary does.
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const uuid = "GPU-aaaaaaaa-0000-0000-0000-000000000002"

// hook copies a login hook with the binary path pointed at bin.
func hook(t *testing.T, src, bin string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "/usr/local/bin/gpubook-agent", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeAgent writes an executable script standing in for the binary.
func fakeAgent(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gpubook-agent")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoginHooks(t *testing.T) {
	tests := []struct {
		name string
		bin  func(t *testing.T) string
		want string
	}{
		{"binary missing", func(t *testing.T) string { return "/nonexistent/gpubook-agent" }, "unset"},
		{"binary fails", func(t *testing.T) string { return fakeAgent(t, "echo boom >&2; exit 1") }, "unset"},
		{"binary prints junk", func(t *testing.T) string { return fakeAgent(t, "echo 'exit 7'") }, "unset"},
		{"binary crashes mid-output", func(t *testing.T) string { return fakeAgent(t, "printf 'export CUDA_VIS'; kill -9 $$") }, "unset"},
		{"booked", func(t *testing.T) string {
			return fakeAgent(t, "echo 'export CUDA_VISIBLE_DEVICES="+uuid+"; export CUDA_DEVICE_ORDER=PCI_BUS_ID'")
		}, uuid},
		{"not booked", func(t *testing.T) string {
			return fakeAgent(t, "echo 'export CUDA_VISIBLE_DEVICES=; export CUDA_DEVICE_ORDER=PCI_BUS_ID'; echo hint >&2")
		}, ""},
	}
	shells := []struct{ name, shell, file string }{
		{"profile.d with sh", "sh", "profile.d/gpubook.sh"},
		{"profile.d with bash", "bash", "profile.d/gpubook.sh"},
		{"bash.bashrc", "bash", "bash.bashrc.snippet"},
	}
	for _, sh := range shells {
		if _, err := exec.LookPath(sh.shell); err != nil {
			continue
		}
		for _, tt := range tests {
			t.Run(sh.name+"/"+tt.name, func(t *testing.T) {
				h := hook(t, sh.file, tt.bin(t))
				script := ". " + h + `; echo "after"; printf '%s' "${CUDA_VISIBLE_DEVICES-unset}"`
				out, err := exec.Command(sh.shell, "-c", script).Output()
				if err != nil {
					t.Fatalf("shell failed: %v", err)
				}
				lines := strings.SplitN(string(out), "\n", 2)
				if lines[0] != "after" || len(lines) < 2 || lines[1] != tt.want {
					t.Errorf("output %q, want after + %q", out, tt.want)
				}
			})
		}
	}
}
