package simgpu

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpubook/gpubook/agent/nvmlgpu/migmock"
	"github.com/gpubook/gpubook/models/wire"
)

// MIGSlices is the compute slices of a simulated GPU in MIG mode, as on
// an A100 or H100.
const MIGSlices = 7

// MIGLayout is the MIG instances of the simulated GPUs in MIG mode: GPU
// index → profiles, in NVML's order ("1g.10gb", "3g.40gb").
type MIGLayout map[int][]string

// migProfileRE is a profile a simulated instance may have: slices, memory
// in GB, optionally "+me".
var migProfileRE = regexp.MustCompile(`^([1-7])g\.([1-9][0-9]{0,3})gb(\+me)?$`)

// ParseMIG reads the sim_mig setting: GPUs separated by ";", each
// "INDEX:PROFILES", the profiles separated by "," and each optionally
// repeated as "Nx": "3:7x1g.10gb" splits GPU 3 into seven 1g.10gb
// instances, "0:1g.10gb,1g.10gb,2g.20gb,3g.40gb; 1:3g.40gb,4g.40gb" two
// GPUs. A GPU's instances hold at most 7 slices; their memory is checked
// against the GPU's in New.
func ParseMIG(s string) (MIGLayout, error) {
	out := MIGLayout{}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		idx, profiles, ok := strings.Cut(part, ":")
		i, err := strconv.Atoi(strings.TrimSpace(idx))
		if !ok || err != nil || i < 0 {
			return nil, fmt.Errorf("agent: simgpu: MIG layout %q: want INDEX:PROFILES, e.g. 3:7x1g.10gb", part)
		}
		if _, dup := out[i]; dup {
			return nil, fmt.Errorf("agent: simgpu: MIG layout: GPU %d listed twice", i)
		}
		list, err := parseProfiles(profiles)
		if err != nil {
			return nil, fmt.Errorf("agent: simgpu: MIG layout of GPU %d: %w", i, err)
		}
		out[i] = list
	}
	return out, nil
}

func parseProfiles(s string) ([]string, error) {
	var out []string
	slices := 0
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		n := 1
		if count, rest, ok := strings.Cut(p, "x"); ok {
			c, err := strconv.Atoi(count)
			if err != nil || c < 1 || c > MIGSlices {
				return nil, fmt.Errorf("%q: want a count of 1 to %d before x", p, MIGSlices)
			}
			n, p = c, rest
		}
		m := migProfileRE.FindStringSubmatch(p)
		if m == nil {
			return nil, fmt.Errorf("%q is not a MIG profile such as 1g.10gb or 3g.40gb", p)
		}
		slices += n * int(m[1][0]-'0')
		for range n {
			out = append(out, p)
		}
	}
	if slices > MIGSlices {
		return nil, fmt.Errorf("the instances hold %d slices, more than the GPU's %d", slices, MIGSlices)
	}
	return out, nil
}

// profileSlicesMem is a valid profile's slices and memory (its GB as GiB).
func profileSlicesMem(p string) (int, int64) {
	m := migProfileRE.FindStringSubmatch(p)
	gb, _ := strconv.ParseInt(m[2], 10, 64)
	return int(m[1][0] - '0'), gb * 1024
}

// String writes the layout back in ParseMIG's form, GPUs in index order.
func (l MIGLayout) String() string {
	idx := make([]int, 0, len(l))
	for i := range l {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	parts := make([]string, len(idx))
	for k, i := range idx {
		parts[k] = strconv.Itoa(i) + ":" + strings.Join(l[i], ",")
	}
	return strings.Join(parts, "; ")
}

// migInstances builds GPU i's instances from its profiles: GPU instance
// ids from 1 in layout order, compute instance 0 holding all slices, and
// a UUID derived from the node, the GPU and the GPU instance, so that a
// restart (or another agent on the same config) keeps every identity.
func migInstances(node string, i int, profiles []string, gpuMemMiB int64) ([]migmock.Instance, error) {
	out := make([]migmock.Instance, len(profiles))
	var mem int64
	for j, p := range profiles {
		slices, m := profileSlicesMem(p)
		mem += m
		out[j] = migmock.Instance{UUID: wire.SimulatedMIGUUID(node, i, j+1), GI: j + 1, CI: 0, Profile: p, Slices: slices, MemoryMiB: m}
	}
	if mem > gpuMemMiB {
		return nil, fmt.Errorf("agent: simgpu: MIG layout of GPU %d: the instances hold %d MiB, more than the GPU's %d (sim_memory_mib)", i, mem, gpuMemMiB)
	}
	return out, nil
}

// scriptMIG puts device i in MIG mode with its instances: NVML lists them
// as MIG devices whose memory and processes follow the simulation, and
// the GPU itself has no utilisation (as on a real one). s.mu is not held.
func (s *Sim) scriptMIG(i int, d *server.Device, instances []migmock.Instance) {
	devs := make([]*mock.Device, len(instances))
	for j, in := range instances {
		devs[j] = migmock.Device(d.Config.Name, in, func() migmock.State {
			st := s.getInst(i, j)
			return migmock.State{UsedMiB: st.used, Procs: st.procs}
		})
	}
	migmock.Attach(&d.Device, func() []*mock.Device { return devs })
	d.GetMigModeFunc = func() (int, int, nvml.Return) {
		return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
}
