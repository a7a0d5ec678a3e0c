package unitsandbox

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestParseShippedUnit: the sandbox the shipped unit asks for, path by
// path, as systemd's namespace tables resolve it.
func TestParseShippedUnit(t *testing.T) {
	u, err := ParseFile("../../deploy/gpubook-agent.service")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.ExecStart, []string{"/usr/local/bin/gpubook-agent", "run", "--config", "/etc/gpubook/agent.conf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ExecStart = %q, want %q", got, want)
	}
	for path, want := range map[string]string{
		"/usr/local/bin/gpubook-agent":         "ro",
		"/etc/gpubook/agent.conf":              "ro",
		"/var/lib/gpubook-agent/spool":         "rw",
		"/sys/fs/cgroup/devices/gpubook":       "rw", // the lock writes here
		"/sys/fs/cgroup/unified/gpubook/uid-1": "rw",
		"/sys/kernel/mm":                       "ro", // ProtectKernelTunables
		"/proc/sys/kernel":                     "ro",
		"/proc/1/status":                       "rw", // API file systems stay
		"/dev/nvidia0":                         "rw",
		"/tmp/x":                               "tmpfs",
		"/home/ann":                            "inaccessible",
	} {
		if got := u.ModeOf(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	if !u.NoNewPrivileges || !strings.Contains(strings.Join(u.Caps, " "), "mknod") {
		t.Errorf("no_new_privs %v, caps %v: want both, mknod among the caps", u.NoNewPrivileges, u.Caps)
	}
}

// TestParseProtectControlGroups: the switch that turned the lock off makes
// the cgroup tree read-only; an explicit ReadWritePaths= wins over it.
func TestParseProtectControlGroups(t *testing.T) {
	for _, tc := range []struct{ unit, want string }{
		{"ProtectSystem=strict\nProtectKernelTunables=yes\nProtectControlGroups=yes\n", "ro"},
		{"ProtectSystem=strict\nProtectKernelTunables=yes\n", "rw"},
		{"ProtectSystem=strict\nProtectControlGroups=yes\nReadWritePaths=/sys/fs/cgroup\n", "rw"},
	} {
		u, err := Parse(strings.NewReader("[Service]\nExecStart=/bin/true\n" + tc.unit))
		if err != nil {
			t.Fatal(err)
		}
		if got := u.ModeOf("/sys/fs/cgroup/devices"); got != tc.want {
			t.Errorf("%q: /sys/fs/cgroup/devices %q, want %q", tc.unit, got, tc.want)
		}
	}
	if _, err := Parse(strings.NewReader("[Service]\nExecStart=/bin/true\nPrivateDevices=yes\n")); err == nil {
		t.Error("a unit with PrivateDevices=yes parsed; the sandbox cannot reproduce it and must say so")
	}
	if _, err := os.Stat("../../deploy/gpubook-agent.service"); err != nil {
		t.Fatal(err)
	}
}
