package nvmlgpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpubook/gpubook/agent/gpu"
)

// Sample reads utilisation, memory and processes of every GPU. A GPU that
// fails (fallen off the bus, driver reset) is skipped and named in the error.
func (b *Backend) Sample(ctx context.Context) ([]gpu.Sample, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("agent: nvml: closed")
	}
	out := make([]gpu.Sample, 0, len(b.devices))
	var errs []error
	for i, d := range b.devices {
		s, err := sampleDevice(d, b.info[i].UUID)
		if err != nil {
			errs = append(errs, fmt.Errorf("agent: nvml: gpu %d: %w", i, err))
			continue
		}
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}

func sampleDevice(d nvml.Device, uuid string) (gpu.Sample, error) {
	s := gpu.Sample{UUID: uuid, MIG: migEnabled(d)}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return s, fmt.Errorf("memory: %w", ret)
	}
	s.MemUsedMiB, s.MemTotalMiB = int64(mem.Used/mib), int64(mem.Total/mib)
	if !s.MIG {
		// Not supported on MIG GPUs: there we report no utilisation at all
		// rather than a wrong number.
		if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
			s.UtilValid, s.UtilPct = true, float64(u.Gpu)
		}
	}
	procs, err := processes(d)
	if err != nil {
		return s, err
	}
	s.Processes = procs
	readHealth(d, &s)
	if s.MIG {
		s.MIGSlices, s.Instances = migLayout(d, s.MemTotalMiB, true)
	}
	return s, nil
}

// readHealth fills the dcgm-exporter style readings; each is optional
// (NOT_SUPPORTED on some boards, no power sensor on others).
func readHealth(d nvml.Device, s *gpu.Sample) {
	if t, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		s.TempC = gpu.Reading{V: float64(t), OK: true}
	}
	if mw, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
		s.PowerW = gpu.Reading{V: float64(mw) / 1000, OK: true}
	}
	if c, ret := d.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
		s.SMClockMHz = gpu.Reading{V: float64(c), OK: true}
	}
	if c, ret := d.GetClockInfo(nvml.CLOCK_MEM); ret == nvml.SUCCESS {
		s.MemClockMHz = gpu.Reading{V: float64(c), OK: true}
	}
}

// processes merges compute and graphics processes by PID. Graphics ones
// (Xorg, gnome-shell) matter because they hold memory too.
func processes(d nvml.Device) ([]gpu.Process, error) {
	compute, ret := d.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
		return nil, fmt.Errorf("compute processes: %w", ret)
	}
	graphics, ret := d.GetGraphicsRunningProcesses()
	if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
		return nil, fmt.Errorf("graphics processes: %w", ret)
	}
	byPID := make(map[uint32]int, len(compute)+len(graphics))
	var out []gpu.Process
	for _, p := range append(compute, graphics...) {
		mem := int64(p.UsedGpuMemory / mib)
		if p.UsedGpuMemory == nvmlValueNotAvailable {
			mem = 0
		}
		if i, ok := byPID[p.Pid]; ok {
			out[i].MemMiB = max(out[i].MemMiB, mem)
			continue
		}
		byPID[p.Pid] = len(out)
		out = append(out, gpu.Process{PID: int(p.Pid), MemMiB: mem})
	}
	return out, nil
}

// nvmlValueNotAvailable is NVML_VALUE_NOT_AVAILABLE for usedGpuMemory
// (unprivileged callers, some MIG setups): memory unknown, not 16 EiB.
const nvmlValueNotAvailable = ^uint64(0)
