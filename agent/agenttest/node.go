// Package agenttest builds the real-component test fixtures the agent's
// tests share: go-nvml's simulated DGX A100 with scripted utilisation,
// memory and process timelines, and a temporary /proc-like tree.
package agenttest

import (
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpubook/gpubook/agent/nvmlgpu/migmock"
)

const mib = 1 << 20

// Proc is one scripted GPU process.
type Proc struct {
	PID    int
	MemMiB int64
}

// GPUState is what one simulated GPU reports until changed.
type GPUState struct {
	Util    uint32
	UsedMiB int64
	MIG     bool
	Procs   []Proc
	// Instances are the GPU's MIG devices (with MIG true); Procs should
	// then list their processes too, as NVML does on the parent.
	Instances []MIG
}

// MIG is one scripted MIG instance and what it reports.
type MIG struct {
	migmock.Instance
	UsedMiB int64
	Procs   []Proc
}

// Node is a go-nvml simulated 8-GPU DGX A100 whose utilisation, memory,
// MIG mode and processes follow what the test sets.
type Node struct {
	Server *server.Server
	mu     sync.Mutex
	state  []GPUState
}

// NewNode returns a simulated node. UUIDs are random per call; use UUID(i).
func NewNode(t testing.TB) *Node {
	t.Helper()
	n := &Node{Server: dgxa100.New()}
	n.state = make([]GPUState, len(n.Server.Devices))
	for i, d := range n.Server.Devices {
		n.script(i, d.(*server.Device))
	}
	return n
}

func (n *Node) get(i int) GPUState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state[i]
}

// script replaces the preset device functions that must follow the script.
func (n *Node) script(i int, d *server.Device) {
	total := d.MemoryInfo.Total
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		used := uint64(n.get(i).UsedMiB) * mib
		return nvml.Memory{Total: total, Used: used, Free: total - used}, nvml.SUCCESS
	}
	d.GetMigModeFunc = func() (int, int, nvml.Return) {
		if n.get(i).MIG {
			return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
		}
		return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS
	}
	// MIG devices as the state lists them (none by default: the mock
	// panics on an unset call).
	migmock.Attach(&d.Device, func() []*mock.Device {
		st := n.get(i)
		out := make([]*mock.Device, len(st.Instances))
		for j, in := range st.Instances {
			out[j] = migmock.Device(d.Config.Name, in.Instance, func() migmock.State {
				return migmock.State{UsedMiB: in.UsedMiB, Procs: processInfo(in.Procs)}
			})
		}
		return out
	})
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		s := n.get(i)
		if s.MIG {
			return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
		}
		return nvml.Utilization{Gpu: s.Util, Memory: s.Util / 2}, nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return processInfo(n.get(i).Procs), nvml.SUCCESS
	}
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return nil, nvml.SUCCESS
	}
	n.scriptHealth(i, d)
}

func processInfo(procs []Proc) []nvml.ProcessInfo {
	var out []nvml.ProcessInfo
	for _, p := range procs {
		out = append(out, nvml.ProcessInfo{Pid: uint32(p.PID), UsedGpuMemory: uint64(p.MemMiB) * mib})
	}
	return out
}

// scriptHealth gives the sensors the mock leaves unset values that follow
// the scripted utilisation, and each GPU its DGX A100 PCI bus ID.
func (n *Node) scriptHealth(i int, d *server.Device) {
	pciDevice := d.Config.PciDeviceId
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		p := nvml.PciInfo{PciDeviceId: pciDevice}
		for j, c := range PCIBusID(i) {
			p.BusId[j] = int8(c)
		}
		return p, nvml.SUCCESS
	}
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 30 + n.get(i).Util/4, nvml.SUCCESS }
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 60000 + 3000*n.get(i).Util, nvml.SUCCESS }
	d.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
		if c == nvml.CLOCK_MEM {
			return 1215, nvml.SUCCESS
		}
		return 1410, nvml.SUCCESS
	}
}

// PCIBusID is GPU i's bus ID on the simulated node.
func PCIBusID(i int) string {
	return []string{"00000000:07:00.0", "00000000:0F:00.0", "00000000:47:00.0", "00000000:4E:00.0",
		"00000000:87:00.0", "00000000:90:00.0", "00000000:B7:00.0", "00000000:BD:00.0"}[i]
}

// Set scripts GPU i from now on.
func (n *Node) Set(i int, s GPUState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.state[i] = s
}

// UUID returns GPU i's UUID.
func (n *Node) UUID(i int) string { return n.Server.Devices[i].(*server.Device).UUID }
