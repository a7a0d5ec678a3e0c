package lock

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// nvidiaMajor is the GPU device files' fixed major (NVIDIA's
// registered char major), used when /proc/devices does not name it.
const nvidiaMajor = 195

// ParseDevices reads /proc/devices and returns the majors the rules need:
// the GPU major ("nvidia-frontend" or "nvidia", else 195), nvidia-uvm's and
// nvidia-caps' (both dynamic; 0 when the driver has none).
func ParseDevices(r io.Reader) (Majors, error) {
	mj := Majors{GPU: nvidiaMajor}
	sc := bufio.NewScanner(r)
	char := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "Character devices:":
			char = true
			continue
		case strings.HasSuffix(line, "devices:"):
			char = false
			continue
		}
		f := strings.Fields(line)
		if !char || len(f) != 2 {
			continue
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			return mj, fmt.Errorf("lock: /proc/devices: %q: %w", line, err)
		}
		switch f[1] {
		case "nvidia-frontend", "nvidia":
			mj.GPU = n
		case "nvidia-uvm":
			mj.UVM = n
		case "nvidia-caps":
			mj.Caps = n
		}
	}
	return mj, sc.Err()
}

// ParseMIGMinors reads /proc/driver/nvidia-caps/mig-minors ("config 1",
// "gpu0/gi1/access 12", "gpu0/gi1/ci0/access 13", …) into a map from
// capability path to the minor of /dev/nvidia-caps/nvidia-capMINOR.
func ParseMIGMinors(r io.Reader) (CapTable, error) {
	out := CapTable{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			return out, fmt.Errorf("lock: mig-minors: %q: %w", sc.Text(), err)
		}
		out[f[0]] = n
	}
	return out, sc.Err()
}

// InstanceCaps returns the capability minors a process needs to use the
// MIG instance (GPU instance gi, compute instance ci) on the GPU with this
// minor; ok is false when the driver lists no such instance.
func InstanceCaps(minors CapTable, gpuMinor, gi, ci int) ([]int, bool) {
	g, ok1 := minors[fmt.Sprintf("gpu%d/gi%d/access", gpuMinor, gi)]
	c, ok2 := minors[fmt.Sprintf("gpu%d/gi%d/ci%d/access", gpuMinor, gi, ci)]
	if !ok1 || !ok2 {
		return nil, false
	}
	return []int{g, c}, true
}
