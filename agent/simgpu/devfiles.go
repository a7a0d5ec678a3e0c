package simgpu

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// nvidiaMajor is the major of NVIDIA's GPU device files (/dev/nvidiaN).
const nvidiaMajor = 195

// makeDeviceFiles gives each simulated GPU a character device file as the
// NVIDIA driver gives a real one: DEVDIR/gpubook-sim/NODE/nvidiaN, char
// 195:N (N is the GPU's minor, its index here), mode 0666. No driver
// answers them (an open that the lock lets through fails with ENXIO), but
// the cgroup device rules of `enforce = lock` guard them exactly as they
// guard real GPUs, so a demo or a test can show the lock without a GPU.
// Files of an earlier run are replaced. /dev is the place: /run and /tmp
// are often mounted nodev, where no device file can be opened.
func (s *Sim) makeDeviceFiles() error {
	if s.cfg.DevDir == "" {
		return nil
	}
	if s.cfg.Node == "" || strings.ContainsAny(s.cfg.Node, "/\x00") || s.cfg.Node == "." || s.cfg.Node == ".." {
		return fmt.Errorf("agent: simgpu: device files: node name %q cannot name a folder", s.cfg.Node)
	}
	dir := filepath.Join(s.cfg.DevDir, "gpubook-sim", s.cfg.Node)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("agent: simgpu: device files: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("agent: simgpu: device files: %w", err)
	}
	files := make([]string, len(s.node.UUIDs))
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("nvidia%d", i))
		if err := unix.Mknod(files[i], unix.S_IFCHR|0o666, int(unix.Mkdev(nvidiaMajor, uint32(i)))); err != nil {
			return fmt.Errorf("agent: simgpu: device files: mknod %s: %w", files[i], err)
		}
		if err := os.Chmod(files[i], 0o666); err != nil { // past the umask
			return fmt.Errorf("agent: simgpu: device files: %w", err)
		}
	}
	s.devFiles = files
	return s.makeCapFiles(dir)
}

// DeviceFiles are the simulated GPUs' device files by index, nil when none
// were made (no DevDir, or New could not make them: see DeviceFilesErr).
func (s *Sim) DeviceFiles() []string { return s.devFiles }

// DeviceFilesErr says why the device files are missing (mknod needs root).
func (s *Sim) DeviceFilesErr() error { return s.devErr }

// Close removes the device files (the rest of the simulation is files the
// next run replaces).
func (s *Sim) Close() error {
	if len(s.devFiles) == 0 {
		return nil
	}
	s.devFiles = nil
	return os.RemoveAll(filepath.Join(s.cfg.DevDir, "gpubook-sim", s.cfg.Node))
}
