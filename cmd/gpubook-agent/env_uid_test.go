package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gpubook/gpubook/agent/agenttest/agentbin"
)

// TestEnvUnnamedUIDFailsClosed: the real binary, run as a UID the name
// service does not know, with $LOGNAME and $USER naming a booked user
// (the user sets those): a user's UID sees no GPU and is told why, a
// system account's keeps its environment. Needs root, to run as them.
func TestEnvUnnamedUIDFailsClosed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the agent as another UID")
	}
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} { // readable by the UIDs below
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := agentbin.Build(t, filepath.Join(dir, "gpubook-agent"))
	cachePath := goodCache(t) // alice holds GPUs 2 and 5 now
	for _, d := range []string{filepath.Dir(cachePath), cachePath} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "agent.conf")
	if err := os.WriteFile(cfg, []byte("cache_file = "+cachePath+"\nstate_dir = "+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		uid      int
		wantVar  string
		wantHint string
	}{
		{"user UID", 54321, "", "gpubook: your UID 54321 has no user name here"},
		{"system UID", 990, "unset", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := exec.Command("getent", "passwd", strconv.Itoa(tt.uid)).Output(); err == nil {
				t.Skipf("UID %d has a name here (%s): the test would prove nothing", tt.uid, out)
			}
			cmd := exec.Command(bin, "env")
			cmd.Env = []string{"PATH=/usr/bin:/bin", "GPUBOOK_AGENT_CONFIG=" + cfg, "LOGNAME=alice", "USER=alice", "HOME=/"}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(tt.uid), Gid: uint32(tt.uid)}}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("env as UID %d: %v (stderr %q)", tt.uid, err, stderr.String())
			}
			if got := evalShell(t, string(out)); got != tt.wantVar {
				t.Errorf("CUDA_VISIBLE_DEVICES = %q, want %q (output %q)", got, tt.wantVar, out)
			}
			if !strings.HasPrefix(stderr.String(), tt.wantHint) || (tt.wantHint == "" && stderr.Len() > 0) {
				t.Errorf("stderr = %q, want it to begin %q", stderr.String(), tt.wantHint)
			}
		})
	}
}
