package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/agent/procfs"
)

func TestEnforceModes(t *testing.T) {
	tests := []struct {
		value, mode string
		signals     bool
	}{
		{"", "detect", false}, // the default, as before
		{"false", "detect", false},
		{"detect", "detect", false},
		{"off", "off", false},
		{"true", "signal", true},
		{"signal", "signal", true},
		{"lock", "lock", true},
		{"LOCK", "lock", true},
	}
	for _, tt := range tests {
		t.Run("enforce="+tt.value, func(t *testing.T) {
			env := map[string]string{"GPUBOOK_AGENT_ENFORCE": tt.value}
			c, err := loadConfig(filepath.Join(t.TempDir(), "none"), func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if c.Enforce != tt.mode || c.Policy.Enforce != tt.signals {
				t.Errorf("mode %q signals %v, want %q %v", c.Enforce, c.Policy.Enforce, tt.mode, tt.signals)
			}
		})
	}
	env := map[string]string{"GPUBOOK_AGENT_ENFORCE": "cgroups"}
	_, err := loadConfig(filepath.Join(t.TempDir(), "none"), func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "want off, detect, signal or lock") {
		t.Errorf("error = %v, want the modes named", err)
	}
}

// A node that cannot lock runs on in detect mode and says why in the log
// and the mode (which status and the node page show).
func TestSetupLockFallsBack(t *testing.T) {
	tests := []struct {
		name      string
		cfg       func(c *config)
		noDevices string
		want      string
		logged    bool
	}{
		{"detect asks for nothing", func(c *config) {}, "", "detect", false},
		{"simulated GPUs without device files", func(c *config) { c.Enforce, c.GPU = "lock", "simulated" },
			"simulated GPUs have no device files: mknod: operation not permitted",
			"detect (cannot lock: simulated GPUs have no device files: mknod: operation not permitted)", true},
		{"no cgroup hierarchy", func(c *config) { c.Enforce, c.CgroupRoot = "lock", t.TempDir() }, "", "detect (cannot lock: ", true},
		{"v2 asked, none mounted", func(c *config) { c.Enforce, c.CgroupRoot, c.LockCgroup = "lock", t.TempDir(), "v2" }, "",
			"detect (cannot lock: lock_cgroup = v2, but no cgroup2 mount", os.Geteuid() == 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultConfig()
			tt.cfg(&c)
			var buf bytes.Buffer
			l, mode := setupLock(c, procfs.New("/proc", "/etc/passwd", "/etc/group"), lock.Majors{GPU: 195}, tt.noDevices, "/proc", slog.New(slog.NewTextHandler(&buf, nil)))
			if os.Geteuid() != 0 && tt.noDevices == "" && c.Enforce == "lock" {
				tt.want = "detect (cannot lock: not running as root)"
			}
			if l != nil || !strings.HasPrefix(mode, tt.want) {
				t.Errorf("locker %v mode %q, want none and %q", l, mode, tt.want)
			}
			if got := strings.Contains(buf.String(), "CANNOT LOCK"); got != tt.logged && os.Geteuid() == 0 {
				t.Errorf("logged %v, want %v: %s", got, tt.logged, buf.String())
			}
		})
	}
}

// TestSetupLockClaimsOnlyAfterSelfCheck: on this machine's kernel, as root,
// the lock is claimed on each hierarchy asked for, after the self-check.
func TestSetupLockClaimsOnlyAfterSelfCheck(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root (CI=true makes this a failure)")
		}
		t.Skip("needs root")
	}
	locktest.HoldAgentPrefix(t)
	for _, want := range []string{"v1", "v2"} {
		t.Run(want, func(t *testing.T) {
			t.Cleanup(func() { // leave no empty "gpubook" folder: TestUnlockCommand would think a lock is live
				for _, cg := range hierarchies("/sys/fs/cgroup") {
					os.Remove(filepath.Join(cg.Root, cgroupPrefix))
				}
			})
			c := defaultConfig()
			c.Enforce, c.LockCgroup, c.DevDir = "lock", want, t.TempDir()
			var buf bytes.Buffer
			l, mode := setupLock(c, procfs.New("/proc", "/etc/passwd", "/etc/group"), lock.Majors{GPU: 195}, "", "/proc", slog.New(slog.NewTextHandler(&buf, nil)))
			if l == nil || mode != "lock "+want {
				t.Fatalf("locker %v mode %q, want lock %s\n%s", l, mode, want, buf.String())
			}
			if !strings.Contains(buf.String(), "self-check passed") {
				t.Errorf("log does not say the self-check passed:\n%s", buf.String())
			}
		})
	}
}

func TestStatusShowsLock(t *testing.T) {
	now := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	tests := []struct{ lock, lockErr, want string }{
		{"lock v1", "", "enforce: lock v1 (v1 refuses opens without counting them: refused opens are not reported; cgroup2 reports them)\n"},
		{"lock v1 (guarding nothing: NVML lists no GPUs)", "", "enforce: NOT LOCKED: lock v1 (guarding nothing: NVML lists no GPUs)\n"},
		{"detect (cannot lock: not running as root)", "", "enforce: NOT LOCKED: detect (cannot lock: not running as root)\n"},
		{"lock v2", "move 7: EBUSY", "enforce: lock v2\nlock: device rules NOT fully applied: move 7: EBUSY\n"},
	}
	for _, tt := range tests {
		t.Run(tt.lock, func(t *testing.T) {
			var buf bytes.Buffer
			if err := printStatus(&buf, daemon.Status{Node: "n1", At: now, Lock: tt.lock, LockError: tt.lockErr}, now); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), tt.want) {
				t.Errorf("status:\n%s\nwant it to contain %q", buf.String(), tt.want)
			}
		})
	}
}

// TestUnlockCommand: processes the agent confined (on every hierarchy the
// node has) are back at the root and the agent's cgroups are gone.
func TestUnlockCommand(t *testing.T) {
	hs := hierarchies("/sys/fs/cgroup")
	if os.Geteuid() != 0 || len(hs) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root and a cgroup devices hierarchy (CI=true makes this a failure)")
		}
		t.Skip("needs root and a cgroup devices hierarchy")
	}
	locktest.HoldAgentPrefix(t)
	if _, err := os.Stat(filepath.Join(hs[0].Root, cgroupPrefix)); err == nil {
		t.Skip("this machine has a live gpubook lock; not touching it")
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	for _, cg := range hs {
		dir, _ := cg.Dir(424242)
		if err := cg.Ensure(dir); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lock.Unlock(cg, nil) })
		if err := cg.Move(sleep.Process.Pid, dir); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"gpubook-agent", "unlock", "--config", "/nonexistent"}, func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatalf("unlock: %v (%s)", err, errb.String())
	}
	for _, cg := range hs {
		if got, err := cg.Of("/proc", sleep.Process.Pid); err != nil || got != cg.Root {
			t.Errorf("%s: process in %s (%v), want %s", cg.Name(), got, err, cg.Root)
		}
		if _, err := os.Stat(filepath.Join(cg.Root, cgroupPrefix)); !os.IsNotExist(err) {
			t.Errorf("%s: %s still there (%v)", cg.Name(), cgroupPrefix, err)
		}
		if !strings.Contains(out.String(), "unlocked: cgroup "+cg.Name()) {
			t.Errorf("output %q does not name %s", out.String(), cg.Name())
		}
	}
}
