// Package migmock gives go-nvml's mock GPUs MIG devices: the handles NVML
// returns for a GPU in MIG mode (GetMigDeviceHandleByIndex), with the ids,
// name, attributes, memory and processes the agent reads from them. The
// simulated node (agent/simgpu) and the agent's tests (agent/agenttest)
// build their MIG layouts with it, so both go through the same NVML calls
// as a real A100 or H100.
package migmock

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

const mib = 1 << 20

// Instance is one MIG device: a GPU instance with one compute instance
// holding all its slices.
type Instance struct {
	UUID      string // "MIG-…"
	GI, CI    int    // NVML's GPU and compute instance ids
	Profile   string // "1g.10gb"
	Slices    int
	MemoryMiB int64
}

// State is what an instance reports at one instant.
type State struct {
	UsedMiB int64
	Procs   []nvml.ProcessInfo
}

// Device returns the MIG device of in on a GPU named gpuName; its memory
// and processes follow state, called at each read.
func Device(gpuName string, in Instance, state func() State) *mock.Device {
	total := uint64(in.MemoryMiB) * mib
	return &mock.Device{
		GetUUIDFunc:              func() (string, nvml.Return) { return in.UUID, nvml.SUCCESS },
		GetNameFunc:              func() (string, nvml.Return) { return gpuName + " MIG " + in.Profile, nvml.SUCCESS },
		GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return in.GI, nvml.SUCCESS },
		GetComputeInstanceIdFunc: func() (int, nvml.Return) { return in.CI, nvml.SUCCESS },
		GetAttributesFunc: func() (nvml.DeviceAttributes, nvml.Return) {
			return nvml.DeviceAttributes{GpuInstanceSliceCount: uint32(in.Slices), ComputeInstanceSliceCount: uint32(in.Slices),
				MultiprocessorCount: uint32(14 * in.Slices), MemorySizeMB: uint64(in.MemoryMiB)}, nvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			used := min(total, uint64(state().UsedMiB)*mib)
			return nvml.Memory{Total: total, Used: used, Free: total - used}, nvml.SUCCESS
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return append([]nvml.ProcessInfo(nil), state().Procs...), nvml.SUCCESS
		},
		GetGraphicsRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
	}
}

// MaxDevices is the most MIG devices an A100 or H100 has (seven 1g
// instances): the slots GetMaxMigDeviceCount reports.
const MaxDevices = 7

// Attach makes gpu list the MIG devices devs returns (at each call, so a
// layout may change) in slots 0… of MaxDevices; the other slots answer
// ERROR_NOT_FOUND, as NVML does for an empty slot.
func Attach(gpu *mock.Device, devs func() []*mock.Device) {
	gpu.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return MaxDevices, nvml.SUCCESS }
	gpu.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		list := devs()
		if i < 0 || i >= len(list) || list[i] == nil {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return list[i], nvml.SUCCESS
	}
}
