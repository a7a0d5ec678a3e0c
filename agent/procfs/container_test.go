package procfs_test

import (
	"fmt"
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

// TestContainerInCgroup reads whole /proc/PID/cgroup files as the engines
// leave them (cgroup v1 with every controller, hybrid, pure v2).
func TestContainerInCgroup(t *testing.T) {
	const id = "8c5f1d2e9b7a4c3d6e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"
	v1 := func(path string) string { // every controller of a v1 host, then the unified line of a hybrid one
		var b strings.Builder
		for i, c := range []string{"name=systemd", "pids", "blkio", "freezer", "devices", "memory", "cpuset", "cpu,cpuacct", "net_cls,net_prio", "perf_event", "hugetlb", "rdma"} {
			fmt.Fprintf(&b, "%d:%s:%s\n", 12-i, c, path)
		}
		return b.String()
	}
	for _, tc := range []struct{ name, cgroup, want string }{
		{"docker, cgroupfs driver, v1", v1("/docker/"+id) + "0::/\n", id},
		{"docker, systemd driver, hybrid", v1("/system.slice/docker-"+id+".scope") + "0::/system.slice/docker-" + id + ".scope\n", id},
		{"docker, v2", "0::/system.slice/docker-" + id + ".scope\n", id},
		{"docker, v2 cgroupfs driver", "0::/docker/" + id + "\n", id},
		{"docker in docker: the inner one", "0::/docker/" + strings.Repeat("1", 64) + "/docker/" + id + "\n", id},
		{"rootless podman, v2", "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + id + ".scope\n", id},
		{"rootful podman, split cgroup", "0::/machine.slice/libpod-" + id + ".scope/container\n", id},
		{"podman, cgroupfs manager, v1", v1("/libpod_parent/libpod-" + id), id},
		{"podman's conmon", "0::/machine.slice/libpod-conmon-" + id + ".scope\n", ""},
		{"kubernetes containerd, systemd, v2",
			"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7d3a1c2e_5b4f_4e6a_9c8d_0f1e2d3c4b5a.slice/cri-containerd-" + id + ".scope\n", id},
		{"kubernetes, cgroupfs, v1", v1("/kubepods/burstable/pod7d3a1c2e-5b4f-4e6a-9c8d-0f1e2d3c4b5a/" + id), id},
		{"kubernetes CRI-O, v2", "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/crio-" + id + ".scope\n", id},
		{"login session, v2", "0::/user.slice/user-1000.slice/session-3.scope\n", ""},
		{"login session, hybrid", v1("/user.slice/user-1000.slice/session-3.scope") + "0::/user.slice/user-1000.slice/session-3.scope\n", ""},
		{"systemd user service", "0::/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter.service\n", ""},
		{"systemd-run transient scope", "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r0f2e9c8d7b6a54321f0e9d8c7b6a5432.scope\n", ""},
		{"gpubook's own cgroup", v1("/gpubook/uid-1000"), ""},
		{"system service", "0::/system.slice/cron.service\n", ""},
		{"root", v1("/") + "0::/\n", ""},
		{"empty (kernel thread gone)", "", ""},
		{"upper-case hex is no engine's", "0::/docker/" + strings.ToUpper(id) + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := procfs.ContainerInCgroup(tc.cgroup); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
