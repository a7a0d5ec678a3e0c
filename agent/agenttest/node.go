// Package agenttest builds the real-component test fixtures the agent's
// tests share: go-nvml's simulated DGX A100 with scripted utilisation,
// memory and process timelines, and a temporary /proc-like tree.
package agenttest

import (
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
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
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		s := n.get(i)
		if s.MIG {
			return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
		}
		return nvml.Utilization{Gpu: s.Util, Memory: s.Util / 2}, nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		var out []nvml.ProcessInfo
		for _, p := range n.get(i).Procs {
			out = append(out, nvml.ProcessInfo{Pid: uint32(p.PID), UsedGpuMemory: uint64(p.MemMiB) * mib})
		}
		return out, nvml.SUCCESS
	}
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return nil, nvml.SUCCESS
	}
}

// Set scripts GPU i from now on.
func (n *Node) Set(i int, s GPUState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.state[i] = s
}

// UUID returns GPU i's UUID.
func (n *Node) UUID(i int) string { return n.Server.Devices[i].(*server.Device).UUID }

// MemTotalMiB returns GPU i's memory size.
func (n *Node) MemTotalMiB(i int) int64 {
	return int64(n.Server.Devices[i].(*server.Device).MemoryInfo.Total / mib)
}
