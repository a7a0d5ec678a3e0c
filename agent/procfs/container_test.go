package procfs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/agent/procfs"
)

// TestContainerID: the container id comes out of the cgroup paths that
// docker, containerd (Kubernetes), podman and CRI-O write, under cgroup v1
// and v2; a process in no container, a conmon monitor and a gone process
// have none.
func TestContainerID(t *testing.T) {
	id := strings.Repeat("4f2a9c1b", 8)
	for _, tc := range []struct{ name, cgroup, want string }{
		{"docker v2 systemd", "0::/system.slice/docker-" + id + ".scope\n", id},
		{"docker v1 cgroupfs", "12:memory:/docker/" + id + "\n11:cpu,cpuacct:/docker/" + id + "\n", id},
		{"containerd k8s", "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/cri-containerd-" + id + ".scope\n", id},
		{"k8s cgroupfs", "4:devices:/kubepods/besteffort/pod1234/" + id + "\n", id},
		{"podman", "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + id + ".scope/container\n", id},
		{"podman conmon", "0::/machine.slice/libpod-conmon-" + id + ".scope\n", ""},
		{"crio", "0::/kubepods.slice/crio-" + id + ".scope\n", id},
		{"login session", "0::/user.slice/user-1000.slice/session-3.scope\n", ""},
		{"not hex", "0::/docker/" + strings.Repeat("z", 64) + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "42"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "42", "cgroup"), []byte(tc.cgroup), 0o644); err != nil {
				t.Fatal(err)
			}
			r := procfs.New(root, "", "")
			if got := r.ContainerID(42); got != tc.want {
				t.Errorf("ContainerID = %q, want %q", got, tc.want)
			}
			if got := r.ContainerID(43); got != "" {
				t.Errorf("gone process: %q", got)
			}
		})
	}
}
