package procfs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ContainerID returns the id of the container pid runs in, read from
// <root>/pid/cgroup, or "" when it runs in none (or is gone). A rootful
// container engine's processes show as root or as a UID of the
// container's own: this id is what lets an admin find whose they are.
func (r *Resolver) ContainerID(pid int) string {
	data, err := os.ReadFile(filepath.Join(r.Root, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return ""
	}
	return ContainerInCgroup(string(data))
}

// ContainerInCgroup finds the container id in the text of a
// /proc/PID/cgroup file ("hierarchy-ID:controllers:path" lines, cgroup v1,
// v2 or both), or "" when the process runs in no container: the 64 hex
// digits of the innermost path segment that is one. Recognised:
//
//	docker:      .../docker-<id>.scope (systemd driver), /docker/<id> (cgroupfs)
//	containerd:  .../cri-containerd-<id>.scope, /kubepods/.../<id>
//	podman:      .../libpod-<id>.scope[/container], /libpod_parent/libpod-<id>
//	CRI-O:       .../crio-<id>.scope
//
// A login session, a user's systemd services and podman's conmon monitor
// are no container.
func ContainerInCgroup(data string) string {
	for _, line := range strings.Split(data, "\n") {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if id := containerInPath(parts[2]); id != "" {
			return id
		}
	}
	return ""
}

// containerInPath finds the innermost container id in one cgroup path.
func containerInPath(path string) string {
	segs := strings.Split(path, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		s := strings.TrimSuffix(segs[i], ".scope")
		if strings.Contains(s, "conmon") { // podman's monitor, not the container
			continue
		}
		for _, prefix := range []string{"docker-", "cri-containerd-", "libpod-", "crio-", "containerd-"} {
			s = strings.TrimPrefix(s, prefix)
		}
		if len(s) == 64 && isHex(s) {
			return s
		}
	}
	return ""
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
