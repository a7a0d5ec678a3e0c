package simgpu

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// capFiles are the simulated MIG instances' capability device files, as
// the NVIDIA driver gives real ones (/dev/nvidia-caps/nvidia-capN): the
// device lock opens exactly the booked instance's two (its GPU
// instance's and its compute instance's access) besides the parent GPU.
type capFiles struct {
	major int
	files []string
}

// capMinor numbers GPU g's GPU instance gi (ci = -1) or its compute
// instance ci as the driver's table does on a node of up to 16 GPUs:
// "config" 1, "monitor" 2, then per GPU, GPU instance 0–14 and compute
// instance 0–7, the access capabilities from 3 on.
func capMinor(g, gi, ci int) int { return 3 + 135*g + 9*gi + ci + 1 }

// MIGTable is the driver's table of capability minors,
// /proc/driver/nvidia-caps/mig-minors, for a node of n GPUs.
func MIGTable(n int) string {
	b := []byte("config 1\nmonitor 2\n")
	for g := range n {
		for gi := range 15 {
			b = fmt.Appendf(b, "gpu%d/gi%d/access %d\n", g, gi, capMinor(g, gi, -1))
			for ci := range 8 {
				b = fmt.Appendf(b, "gpu%d/gi%d/ci%d/access %d\n", g, gi, ci, capMinor(g, gi, ci))
			}
		}
	}
	return string(b)
}

// MIGTableRoot is the /proc-like folder whose driver/nvidia-caps/mig-minors
// lists the simulated GPUs' capability minors (lock.ReadMIGMinors reads
// it); "" when no GPU is in MIG mode.
func (s *Sim) MIGTableRoot() string {
	if len(s.migs) == 0 {
		return ""
	}
	return s.cfg.Dir
}

// CapsMajor is the character major of the simulated capability files, one
// no driver on this machine uses (an open the lock lets through fails
// with ENXIO, as a simulated GPU's does); 0 when there are none.
func (s *Sim) CapsMajor() int { return s.caps.major }

// CapFile is the path of the capability file of GPU g's GPU instance gi
// (ci = -1) or compute instance ci; "" when none was made.
func (s *Sim) CapFile(g, gi, ci int) string {
	if s.caps.major == 0 {
		return ""
	}
	return filepath.Join(s.cfg.DevDir, "gpubook-sim", s.cfg.Node, "nvidia-caps", fmt.Sprintf("nvidia-cap%d", capMinor(g, gi, ci)))
}

// writeMIGTable writes the table under Dir for the lock to read.
func (s *Sim) writeMIGTable() error {
	if len(s.migs) == 0 {
		return nil
	}
	dir := filepath.Join(s.cfg.Dir, "driver", "nvidia-caps")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("agent: simgpu: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mig-minors"), []byte(MIGTable(s.cfg.GPUs)), 0o644); err != nil {
		return fmt.Errorf("agent: simgpu: %w", err)
	}
	return nil
}

// makeCapFiles makes each instance's two capability files in the node's
// device folder (called by makeDeviceFiles, with root).
func (s *Sim) makeCapFiles(dir string) error {
	if len(s.migs) == 0 {
		return nil
	}
	major, err := freeMajor()
	if err != nil {
		return err
	}
	caps := filepath.Join(dir, "nvidia-caps")
	if err := os.MkdirAll(caps, 0o755); err != nil {
		return fmt.Errorf("agent: simgpu: device files: %w", err)
	}
	var files []string
	for _, m := range s.migs {
		for _, in := range m.instances {
			for _, minor := range []int{capMinor(m.gpu, in.GI, -1), capMinor(m.gpu, in.GI, in.CI)} {
				f := filepath.Join(caps, fmt.Sprintf("nvidia-cap%d", minor))
				if err := unix.Mknod(f, unix.S_IFCHR|0o444, int(unix.Mkdev(uint32(major), uint32(minor)))); err != nil {
					return fmt.Errorf("agent: simgpu: device files: mknod %s: %w", f, err)
				}
				if err := os.Chmod(f, 0o444); err != nil { // as the driver makes them: readable by all
					return fmt.Errorf("agent: simgpu: device files: %w", err)
				}
				files = append(files, f)
			}
		}
	}
	s.caps = capFiles{major: major, files: files}
	return nil
}

// freeMajor is a character major from the kernel's dynamic range that
// /proc/devices does not list, as nvidia-caps' own dynamic one would be.
func freeMajor() (int, error) {
	b, err := os.ReadFile("/proc/devices")
	if err != nil {
		return 0, fmt.Errorf("agent: simgpu: device files: %w", err)
	}
	used := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			used[f[0]] = true
		}
	}
	for m := 511; m >= 384; m-- {
		if !used[strconv.Itoa(m)] {
			return m, nil
		}
	}
	return 0, fmt.Errorf("agent: simgpu: device files: no free character major in 384-511")
}
