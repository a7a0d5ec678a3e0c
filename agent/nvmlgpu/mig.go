package nvmlgpu

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpubook/gpubook/agent/gpu"
)

// migLayout reads a MIG GPU's layout: its total compute slices and the
// MIG devices NVML lists, each with its ids, profile, slices and memory
// (and, with procs, the processes NVML lists on its own handle). A slot
// that is empty or does not answer is skipped (instances come and go as
// admins reconfigure the GPU), and so is an instance whose profile is not
// a bookable one: a compute instance smaller than its GPU instance
// ("1c.2g.20gb") shares that GPU instance's memory, so it cannot be
// booked on its own.
func migLayout(d nvml.Device, gpuMemMiB int64, procs bool) (int, []gpu.MIGInstance) {
	n, ret := d.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return 0, nil
	}
	var out []gpu.MIGInstance
	for i := range n {
		m, ret := d.GetMigDeviceHandleByIndex(i)
		if ret != nvml.SUCCESS || m == nil {
			continue
		}
		in, ok := readInstance(m, gpuMemMiB)
		if !ok {
			continue
		}
		if procs {
			// An instance that cannot list its processes is still there:
			// it is sampled without them rather than dropped.
			in.Processes, _ = processes(m)
		}
		out = append(out, in)
	}
	total := totalSlices(d, n)
	if !fits(out, total, gpuMemMiB) {
		// Not a layout a GPU can have (a driver answering nonsense): the
		// GPU is then treated as one that cannot be split right now.
		return total, nil
	}
	return total, out
}

// fits reports whether the instances fit their GPU: no more slices than
// it has, none with more memory than it has.
func fits(instances []gpu.MIGInstance, slices int, memMiB int64) bool {
	sum := 0
	for _, in := range instances {
		sum += in.Slices
		if in.MemTotalMiB <= 0 || in.MemTotalMiB > memMiB {
			return false
		}
	}
	return sum <= slices
}

// readInstance reads one MIG device; ok is false when it does not answer
// its UUID or ids, or has no bookable profile.
func readInstance(m nvml.Device, gpuMemMiB int64) (gpu.MIGInstance, bool) {
	uuid, ret := m.GetUUID()
	if ret != nvml.SUCCESS {
		return gpu.MIGInstance{}, false
	}
	// The ids name the capability files the device lock opens: an
	// instance without them cannot be enforced, so it is not listed.
	gi, ret := m.GetGpuInstanceId()
	if ret != nvml.SUCCESS || gi < 0 {
		return gpu.MIGInstance{}, false
	}
	ci, ret := m.GetComputeInstanceId()
	if ret != nvml.SUCCESS || ci < 0 {
		return gpu.MIGInstance{}, false
	}
	in := gpu.MIGInstance{UUID: uuid, GPUInstanceID: gi, ComputeInstanceID: ci}
	if mem, ret := m.GetMemoryInfo(); ret == nvml.SUCCESS {
		in.MemUsedMiB, in.MemTotalMiB = int64(mem.Used/mib), int64(mem.Total/mib)
	}
	attr, ret := m.GetAttributes()
	if ret == nvml.SUCCESS {
		in.Slices = int(attr.GpuInstanceSliceCount)
		if in.MemTotalMiB == 0 {
			in.MemTotalMiB = int64(attr.MemorySizeMB)
		}
		if attr.ComputeInstanceSliceCount != 0 && attr.ComputeInstanceSliceCount != attr.GpuInstanceSliceCount {
			return in, false // a share of a GPU instance: not a unit of its own
		}
	}
	in.Profile = profileFromName(m)
	if in.Profile == "" && ret == nvml.SUCCESS {
		in.Profile = profileName(in.Slices, attr.MemorySizeMB, gpuMemMiB)
	}
	if s, ok := profileSlices(in.Profile); ok && in.Slices == 0 {
		in.Slices = s
	}
	return in, ProfileRE.MatchString(in.Profile) && in.Slices > 0
}

// ProfileRE is a bookable MIG profile name as NVML spells it: compute
// slices, memory, and an optional "+me" (media extensions) or similar
// suffix, as the portal accepts it.
var ProfileRE = regexp.MustCompile(`^([1-8])g\.[0-9]{1,4}gb(\+[a-z]{1,8})?$`)

// profileFromName takes the profile from the MIG device's name, which the
// driver gives as "NVIDIA A100-SXM4-80GB MIG 1g.10gb"; "" when it has none.
func profileFromName(m nvml.Device) string {
	name, ret := m.GetName()
	if ret != nvml.SUCCESS {
		return ""
	}
	_, after, ok := strings.Cut(name, "MIG ")
	if !ok {
		return ""
	}
	if f := strings.Fields(after); len(f) > 0 && ProfileRE.MatchString(f[0]) {
		return f[0]
	}
	return ""
}

// profileName builds the profile name from the attributes as NVIDIA's
// tools do: the instance's share of the GPU's memory, rounded up to an
// eighth, times the GPU's memory in whole GB ("1g.10gb" on an 80 GB GPU).
func profileName(slices int, memMB uint64, gpuMemMiB int64) string {
	if slices <= 0 || memMB == 0 || gpuMemMiB <= 0 {
		return ""
	}
	frac := math.Ceil(float64(memMB)/float64(gpuMemMiB)*8) / 8
	gb := math.Ceil(float64(gpuMemMiB) / 1024)
	return fmt.Sprintf("%dg.%dgb", slices, int(math.Round(frac*gb)))
}

// profileSlices is the slice count a profile name starts with.
func profileSlices(profile string) (int, bool) {
	m := ProfileRE.FindStringSubmatch(profile)
	if m == nil {
		return 0, false
	}
	return int(m[1][0] - '0'), true
}

// totalSlices is the GPU's compute slices: the most any GPU instance
// profile it offers holds (the whole-GPU profile, 7 on an A100 or H100),
// else its most MIG devices.
func totalSlices(d nvml.Device, maxDevices int) int {
	most := 0
	for p := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		if info, ret := d.GetGpuInstanceProfileInfo(p); ret == nvml.SUCCESS {
			most = max(most, int(info.SliceCount))
		}
	}
	if most == 0 {
		return maxDevices
	}
	return most
}
