package lock

import (
	"slices"
	"time"

	devices "github.com/opencontainers/cgroups/devices/config"

	"github.com/gpubook/gpubook/models/wire"
)

// GPU is one whole GPU of the node: its UUID (what bookings name), the
// minor of its device file, /dev/nvidiaMINOR (char 195:MINOR), and whether
// it is in MIG mode (only then do its capability files matter: the rules
// leave those of other GPUs alone, which keeps them five times shorter).
type GPU struct {
	UUID  string
	Minor int
	MIG   bool
}

// MIGInstance is one MIG instance: a process reaches it through its parent
// GPU's device file plus the capability device files of its GPU instance
// and compute instance (/dev/nvidia-caps/nvidia-capN, major "nvidia-caps").
// The daemon gives the ids NVML reports; Resolve fills CapMinors from the
// driver's table.
type MIGInstance struct {
	UUID            string
	ParentMinor     int
	GPUInstance     int
	ComputeInstance int
	CapMinors       []int
}

// Majors are the character-device majors the rules name, read from
// /proc/devices at start. Caps is 0 where the node has no nvidia-caps.
type Majors struct {
	GPU, UVM, Caps int
}

// maxGPUMinor is the highest minor of a GPU device file: 254 is
// nvidia-modeset and 255 nvidiactl, which every CUDA program opens.
const maxGPUMinor = 253

// Allow is what one user may open at one instant: the minors of the GPU
// device files and of the MIG capability files of what they hold.
type Allow struct {
	GPUMinors []int
	CapMinors []int
}

// AllowFor computes, from the cached schedule, what user may open at t: the
// GPUs (and MIG instances) of their bookings active at t. A GPU booked as a
// whole also opens the capability files of every MIG instance on it, those
// present (migs, resolved) and, in MIG mode, those the driver's table
// lists for it (caps may be nil on a node without MIG).
func AllowFor(bookings []wire.Booking, user string, t time.Time, gpus []GPU, migs []MIGInstance, caps CapTable) Allow {
	held := map[string]bool{}
	for _, b := range bookings {
		if b.User == user && b.ActiveAt(t) {
			for _, u := range b.GPUUUIDs {
				held[u] = true
			}
		}
	}
	var a Allow
	wholeMinors := map[int]bool{}
	for _, g := range gpus {
		if held[g.UUID] {
			a.GPUMinors = append(a.GPUMinors, g.Minor)
			if g.MIG {
				a.CapMinors = append(a.CapMinors, caps.OfGPU(g.Minor)...)
			}
			wholeMinors[g.Minor] = true
		}
	}
	for _, m := range migs {
		// A booked instance opens its parent GPU only when capability files
		// are known (its own, or the table's for the parent, which the rules
		// then keep closed): with the driver's table unreadable the rules
		// close no capability file, and the parent would open every instance.
		known := len(m.CapMinors) > 0 || len(caps.OfGPU(m.ParentMinor)) > 0
		if (held[m.UUID] && known) || wholeMinors[m.ParentMinor] {
			a.GPUMinors = append(a.GPUMinors, m.ParentMinor)
			a.CapMinors = append(a.CapMinors, m.CapMinors...)
		}
	}
	a.GPUMinors = sortedUnique(a.GPUMinors)
	a.CapMinors = sortedUnique(a.CapMinors)
	return a
}

// Key is a stable text form of a, so the agent rewrites a cgroup's rules
// only when they change.
func (a Allow) Key() string {
	b := []byte("gpu")
	for _, m := range a.GPUMinors {
		b = append(b, ' ')
		b = appendInt(b, m)
	}
	b = append(b, " cap"...)
	for _, m := range a.CapMinors {
		b = append(b, ' ')
		b = appendInt(b, m)
	}
	return string(b)
}

// Rules turns a into cgroup device rules: everything allowed (a login needs
// /dev/null, its terminal and so on; the control devices nvidiactl,
// nvidia-modeset, nvidia-uvm and nvidia-uvm-tools stay open), except every
// GPU device file 195:0–253 and every MIG capability file of nodeCaps
// (NodeCaps) that a does not name. Denying all possible GPU minors, not
// only the ones present, also covers a GPU that appears later. The MIG
// "config" and "monitor" capabilities are no instance's and stay as their
// file modes say (root only, by default). a's lists are sorted, as AllowFor
// returns them.
func Rules(a Allow, mj Majors, nodeCaps []int) []*devices.Rule {
	rules := []*devices.Rule{{Type: devices.WildcardDevice, Major: devices.Wildcard, Minor: devices.Wildcard,
		Permissions: "rwm", Allow: true}}
	for m := 0; m <= maxGPUMinor; m++ {
		if !slices.Contains(a.GPUMinors, m) {
			rules = append(rules, deny(mj.GPU, m))
		}
	}
	if mj.Caps > 0 {
		for _, m := range nodeCaps {
			if _, held := slices.BinarySearch(a.CapMinors, m); !held {
				rules = append(rules, deny(mj.Caps, m))
			}
		}
	}
	return rules
}

// openRules is what an unlocked cgroup gets: everything allowed.
func openRules() []*devices.Rule {
	return []*devices.Rule{{Type: devices.WildcardDevice, Major: devices.Wildcard, Minor: devices.Wildcard,
		Permissions: "rwm", Allow: true}}
}

func deny(major, minor int) *devices.Rule {
	return &devices.Rule{Type: devices.CharDevice, Major: int64(major), Minor: int64(minor), Permissions: "rwm"}
}

func sortedUnique(s []int) []int {
	slices.Sort(s)
	return slices.Compact(s)
}

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}
