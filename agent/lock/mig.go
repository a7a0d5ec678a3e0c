package lock

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CapTable is the driver's table of MIG capability device files,
// /proc/driver/nvidia-caps/mig-minors: a capability path ("gpu0/gi1/access",
// "gpu0/gi1/ci0/access") → the minor of /dev/nvidia-caps/nvidia-capMINOR.
// The driver writes it once at load, for every GPU instance and compute
// instance a GPU could have, whether or not it exists now; the number
// after "gpu" is the GPU's device minor (/dev/nvidiaN).
type CapTable map[string]int

// ReadMIGMinors reads the table under procRoot. A node whose driver has
// no MIG support has no such file: that is an empty table, not an error.
func ReadMIGMinors(procRoot string) (CapTable, error) {
	f, err := os.Open(filepath.Join(procRoot, "driver", "nvidia-caps", "mig-minors"))
	if errors.Is(err, fs.ErrNotExist) {
		return CapTable{}, nil
	}
	if err != nil {
		return CapTable{}, fmt.Errorf("lock: %w", err)
	}
	defer f.Close()
	return ParseMIGMinors(f)
}

// OfGPU returns, sorted, every capability minor the table has for the GPU
// with this device minor: those of all its possible GPU and compute
// instances. A user who holds the whole GPU may open all of them; anyone
// else none.
func (t CapTable) OfGPU(minor int) []int {
	prefix := "gpu" + strconv.Itoa(minor) + "/"
	var out []int
	for path, m := range t {
		if strings.HasPrefix(path, prefix) {
			out = append(out, m)
		}
	}
	return sortedUnique(out)
}

// Resolve returns migs with CapMinors filled from t by each instance's
// parent GPU minor, GPU instance and compute instance ids. An instance the
// table does not list keeps the capability minors it came with (none from
// the daemon): it then stays closed, never opened by guess.
func Resolve(migs []MIGInstance, t CapTable) []MIGInstance {
	out := make([]MIGInstance, len(migs))
	for i, m := range migs {
		out[i] = m
		if caps, ok := InstanceCaps(t, m.ParentMinor, m.GPUInstance, m.ComputeInstance); ok {
			out[i].CapMinors = caps
		}
	}
	return out
}

// NodeCaps lists, sorted, the capability minors the rules close unless a
// user's Allow names them: every one the table has for the node's GPUs in
// MIG mode (so an instance an admin creates between two syncs is closed
// from the start) and those of the instances found.
func NodeCaps(gpus []GPU, migs []MIGInstance, t CapTable) []int {
	var out []int
	for _, g := range gpus {
		if g.MIG {
			out = append(out, t.OfGPU(g.Minor)...)
		}
	}
	for _, m := range migs {
		out = append(out, m.CapMinors...)
	}
	return sortedUnique(out)
}

// capsKey is a short fingerprint of NodeCaps for the rules' change key: a
// new instance (or a table read anew) rewrites the rules.
func capsKey(caps []int) string {
	h := fnv.New64a()
	var b []byte
	for _, c := range caps {
		b = strconv.AppendInt(b[:0], int64(c), 10)
		h.Write(append(b, ' '))
	}
	return strconv.FormatUint(h.Sum64(), 16)
}
