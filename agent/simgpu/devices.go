package simgpu

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

const mib = 1 << 20

// devState is what one simulated GPU (or MIG instance) reports until the
// next step.
type devState struct {
	util  uint32
	used  int64 // MiB
	procs []nvml.ProcessInfo
	insts []devState // a MIG GPU's instances, by their place in the layout
}

// setDevices turns the planned processes into each GPU's readings: the
// utilisation of its processes added up (at most 100) and their memory; a
// GPU without processes is idle and empty. s.mu is held.
func (s *Sim) setDevices(procs []Proc) {
	next := make([]devState, len(s.state))
	for i, mig := range s.node.MIG {
		next[i].insts = make([]devState, len(mig))
	}
	for _, p := range procs {
		info := nvml.ProcessInfo{Pid: uint32(s.pids[p.Key]), UsedGpuMemory: uint64(p.MemMiB) * mib}
		st := &next[p.GPU]
		st.util = min(100, st.util+p.Util)
		st.used = min(s.node.MemoryMiB, st.used+p.MemMiB)
		st.procs = append(st.procs, info) // a MIG GPU lists its instances' processes too
		if p.Inst >= 0 && p.Inst < len(st.insts) {
			in := &st.insts[p.Inst]
			in.used = min(s.node.MIG[p.GPU][p.Inst].MemoryMiB, in.used+p.MemMiB)
			in.procs = append(in.procs, info)
		}
	}
	s.state = next
}

func (s *Sim) get(i int) devState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state[i]
}

// getInst is MIG instance j of GPU i (idle before the first step).
func (s *Sim) getInst(i, j int) devState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j < len(s.state[i].insts) {
		return s.state[i].insts[j]
	}
	return devState{}
}

// script1 replaces the mock's preset readings of device i with ones that
// follow the simulation (the presets are constant and list no processes).
func (s *Sim) script1(i int, d *server.Device) {
	total := d.MemoryInfo.Total
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		used := min(total, uint64(s.get(i).used)*mib)
		return nvml.Memory{Total: total, Used: used, Free: total - used}, nvml.SUCCESS
	}
	d.GetMigModeFunc = func() (int, int, nvml.Return) {
		return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		u := s.get(i).util
		return nvml.Utilization{Gpu: u, Memory: u / 2}, nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return append([]nvml.ProcessInfo(nil), s.get(i).procs...), nvml.SUCCESS
	}
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 30 + s.get(i).util/3, nvml.SUCCESS }
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 60000 + 3000*s.get(i).util, nvml.SUCCESS }
	d.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
		if c == nvml.CLOCK_MEM {
			return 1593, nvml.SUCCESS
		}
		return 1410, nvml.SUCCESS
	}
}
