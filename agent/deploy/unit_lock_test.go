package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/agent/agenttest/agentbin"
	"github.com/gpubook/gpubook/agent/agenttest/nodetest"
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
		{"v1", "v1", "", "enforce: lock v1 (v1 refuses opens without counting"},
		{"v2", "v2", "", "enforce: lock v2\n"},
		{"v1 unit as shipped before", "v1", oldUnit, "enforce: NOT LOCKED: detect (cannot lock: cgroup v1: lock: cgroup: mkdir /sys/fs/cgroup/devices/gpubook: read-only file system)"},
		{"v2 unit as shipped before", "v2", oldUnit, "enforce: NOT LOCKED: detect (cannot lock: cgroup v2: lock: cgroup: mkdir /sys/fs/cgroup/unified/gpubook: read-only file system)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred, _ := json.Marshal(map[string]any{"portal_url": "http://127.0.0.1:9", "node_id": 1, "node": "unit1", "credential": "gpbn_test"})
			n := nodetest.Install(t, bin, ".", nil, cred, nil, nil)
			n.AppendConf(t, "metrics_addr =\nsample_interval = 1s\nheartbeat_interval = 2s\nnode = unit1\ngpu = simulated\nenforce = lock\nlock_cgroup = "+tc.cgroup+"\n")
			if tc.unitEdit != "" {
				n.EditUnit(t, "ReadWritePaths=/var/lib/gpubook-agent /sys/fs/cgroup\n", tc.unitEdit)
			}
			a := n.StartAgent(t)
			got := n.WaitStatus(t, a, nodetest.Locked)
			if !strings.Contains(got, tc.want) {
				t.Errorf("gpubook-agent status:\n%s\nwant %q\nagent log:\n%s", got, tc.want, a.Log())
			}
			if tc.unitEdit == "" && !strings.Contains(a.Log(), "self-check passed") {
				t.Errorf("the agent claims the lock without saying its self-check passed:\n%s", a.Log())
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
