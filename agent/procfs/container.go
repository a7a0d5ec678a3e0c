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
// Recognised (cgroup v1 and v2):
//
//	docker:      .../docker-<id>.scope, /docker/<id>
//	containerd:  .../cri-containerd-<id>.scope, /kubepods/.../<id>
//	podman:      .../libpod-<id>.scope, /libpod_parent/libpod-<id>
//	CRI-O:       .../crio-<id>.scope
func (r *Resolver) ContainerID(pid int) string {
	data, err := os.ReadFile(filepath.Join(r.Root, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
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
