// Package unitsandbox runs a command as systemd would run a service unit's
// ExecStart, for tests on machines without systemd: it parses the unit
// file that install.sh installs and reproduces its file-system sandbox
// (ProtectSystem, ReadWritePaths, ProtectKernelTunables,
// ProtectControlGroups, PrivateTmp, ProtectHome, StateDirectory) in a
// private mount namespace, and its CapabilityBoundingSet and
// NoNewPrivileges with setpriv(1). A test package that uses it calls
// MaybeRun first thing in its TestMain: the sandbox is set up by the test
// binary itself, re-run as a child in a new mount namespace.
//
// Not reproduced (they filter system calls or set resource limits, not
// what a file system lets the agent write): SystemCallArchitectures,
// RestrictNamespaces, RestrictAddressFamilies, MemoryDenyWriteExecute,
// LockPersonality, RestrictRealtime, RestrictSUIDSGID, ProtectClock,
// ProtectHostname, ProtectKernelModules, ProtectKernelLogs, MemoryMax,
// CPUQuota. Unit.Ignored lists those a unit sets.
package unitsandbox

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Unit is what a service unit says about its sandbox.
type Unit struct {
	// ExecStart is the command line, split on spaces (no quoting: the
	// units tested here need none).
	ExecStart []string
	// Paths maps a path to its mode in the sandbox: "ro", "rw" (writable),
	// "tmpfs" (a new empty writable tmpfs) or "inaccessible".
	Paths map[string]string
	// Caps is CapabilityBoundingSet as setpriv names them ("kill",
	// "sys_admin"); nil when the unit does not restrict it.
	Caps []string
	// NoNewPrivileges is the unit's NoNewPrivileges.
	NoNewPrivileges bool
	// Ignored lists the set directives this package does not reproduce.
	Ignored []string
}

// Parse reads the [Service] section of a unit file.
func Parse(r io.Reader) (Unit, error) {
	u := Unit{Paths: map[string]string{}}
	// Layers, lowest first; a later layer wins for the same path, as an
	// explicit ReadWritePaths= wins over what Protect*= implies.
	implicit, protect, explicit := map[string]string{}, map[string]string{}, map[string]string{}
	for _, api := range []string{"/dev", "/proc", "/sys"} {
		implicit[api] = "rw" // API file systems are never made read-only by ProtectSystem
	}
	kernelTunables, controlGroups := false, false
	section := ""
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		if section != "[Service]" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return u, fmt.Errorf("unitsandbox: line %d: want Key=value: %q", n, line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		yes := v == "yes" || v == "true" || v == "1" || v == "on"
		switch k {
		case "ExecStart":
			u.ExecStart = strings.Fields(v)
		case "ProtectSystem":
			switch v {
			case "strict":
				protect["/"] = "ro"
			case "full":
				protect["/etc"] = "ro"
				fallthrough
			case "yes", "true":
				for _, p := range []string{"/usr", "/boot", "/efi"} {
					protect[p] = "ro"
				}
			}
		case "ReadWritePaths", "ReadOnlyPaths", "InaccessiblePaths":
			mode := map[string]string{"ReadWritePaths": "rw", "ReadOnlyPaths": "ro", "InaccessiblePaths": "inaccessible"}[k]
			for _, p := range strings.Fields(v) {
				explicit[strings.TrimLeft(p, "-+")] = mode
			}
		case "StateDirectory", "CacheDirectory", "LogsDirectory":
			base := map[string]string{"StateDirectory": "/var/lib", "CacheDirectory": "/var/cache", "LogsDirectory": "/var/log"}[k]
			for _, d := range strings.Fields(v) {
				explicit[filepath.Join(base, d)] = "rw"
			}
		case "PrivateTmp":
			if yes {
				protect["/tmp"], protect["/var/tmp"] = "tmpfs", "tmpfs"
			}
		case "ProtectHome":
			switch {
			case yes:
				for _, p := range []string{"/home", "/root", "/run/user"} {
					protect[p] = "inaccessible"
				}
			case v == "read-only":
				for _, p := range []string{"/home", "/root", "/run/user"} {
					protect[p] = "ro"
				}
			}
		case "ProtectKernelTunables":
			kernelTunables = yes
		case "ProtectControlGroups":
			controlGroups = yes
		case "CapabilityBoundingSet":
			u.Caps = []string{}
			for _, c := range strings.Fields(v) {
				u.Caps = append(u.Caps, strings.ToLower(strings.TrimPrefix(c, "CAP_")))
			}
		case "NoNewPrivileges":
			u.NoNewPrivileges = yes
		case "SystemCallArchitectures", "RestrictNamespaces", "RestrictAddressFamilies", "MemoryDenyWriteExecute",
			"LockPersonality", "RestrictRealtime", "RestrictSUIDSGID", "ProtectClock", "ProtectHostname",
			"ProtectKernelModules", "ProtectKernelLogs", "MemoryMax", "CPUQuota", "SystemCallFilter":
			u.Ignored = append(u.Ignored, k)
		case "PrivateDevices", "ProtectProc", "PrivateUsers", "PrivateNetwork", "DevicePolicy", "DeviceAllow",
			"RootDirectory", "BindPaths", "BindReadOnlyPaths", "TemporaryFileSystem", "ProcSubset":
			if yes || (k != "PrivateDevices" && k != "PrivateUsers" && k != "PrivateNetwork") {
				return u, fmt.Errorf("unitsandbox: line %d: %s is not reproduced; extend the package before relying on it", n, k)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return u, fmt.Errorf("unitsandbox: %w", err)
	}
	if kernelTunables {
		// systemd's protect_kernel_tunables tables: /sys read-only, but
		// /sys/fs/cgroup left as it is unless ProtectControlGroups says.
		protect["/proc/sys"], protect["/proc/sysrq-trigger"], protect["/sys"] = "ro", "ro", "ro"
		implicit["/sys/fs/cgroup"] = "rw"
	}
	if controlGroups {
		protect["/sys/fs/cgroup"] = "ro"
	}
	for _, layer := range []map[string]string{implicit, protect, explicit} {
		for p, m := range layer {
			u.Paths[filepath.Clean(p)] = m
		}
	}
	if len(u.ExecStart) == 0 {
		return u, fmt.Errorf("unitsandbox: no ExecStart")
	}
	return u, nil
}

// ParseFile is Parse of a file.
func ParseFile(path string) (Unit, error) {
	f, err := os.Open(path)
	if err != nil {
		return Unit{}, fmt.Errorf("unitsandbox: %w", err)
	}
	defer f.Close()
	return Parse(f)
}

// ModeOf is the mode the sandbox gives path: that of the longest entry
// that is path or one of its parents ("" when none covers it: left as is).
func (u Unit) ModeOf(path string) string {
	best, mode := -1, ""
	for p, m := range u.Paths {
		if (p == "/" || path == p || strings.HasPrefix(path, p+"/")) && len(p) > best {
			best, mode = len(p), m
		}
	}
	return mode
}

// sortedPaths lists the unit's entries, parents first.
func (u Unit) sortedPaths() []string {
	out := make([]string, 0, len(u.Paths))
	for p := range u.Paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
