// Package nvmlgpu implements gpu.Source with go-nvml. It is the only agent
// package that needs cgo. Every NVML call is gated on a successful Init:
// calling NVML after a failed Init kills the process (symbol lookup error).
package nvmlgpu

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpubook/gpubook/agent/gpu"
)

const mib = 1 << 20

// Backend is an initialised NVML library and the handles of its devices.
type Backend struct {
	mu      sync.Mutex
	lib     nvml.Interface
	devices []nvml.Device
	info    []gpu.Device
	closed  bool
}

// Open initialises lib (nvml.New() in production, a go-nvml mock in tests)
// and reads the device list. On a failed Init it returns an error and never
// touches lib again.
func Open(lib nvml.Interface) (*Backend, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("agent: nvml: init: %w", ret)
	}
	b := &Backend{lib: lib}
	if err := b.load(); err != nil {
		_ = lib.Shutdown()
		return nil, err
	}
	return b, nil
}

// load fills the device handles and identities.
func (b *Backend) load() error {
	n, ret := b.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("agent: nvml: device count: %w", ret)
	}
	for i := 0; i < n; i++ {
		d, ret := b.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("agent: nvml: device %d: %w", i, ret)
		}
		info, err := identify(d, i)
		if err != nil {
			return err
		}
		b.devices = append(b.devices, d)
		b.info = append(b.info, info)
	}
	return nil
}

func identify(d nvml.Device, i int) (gpu.Device, error) {
	uuid, ret := d.GetUUID()
	if ret != nvml.SUCCESS {
		return gpu.Device{}, fmt.Errorf("agent: nvml: device %d uuid: %w", i, ret)
	}
	name, ret := d.GetName()
	if ret != nvml.SUCCESS {
		name = "unknown"
	}
	minor, ret := d.GetMinorNumber()
	if ret != nvml.SUCCESS {
		minor = i
	}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return gpu.Device{}, fmt.Errorf("agent: nvml: device %d memory: %w", i, ret)
	}
	dev := gpu.Device{UUID: uuid, Index: i, Minor: minor, Model: name, MemoryMiB: int64(mem.Total / mib), PCIBusID: pciBusID(d)}
	refreshMIG(d, &dev)
	return dev, nil
}

// refreshMIG reads the GPU's MIG mode and, when on, its layout.
func refreshMIG(d nvml.Device, dev *gpu.Device) {
	dev.MIG, dev.MIGSlices, dev.Instances = migEnabled(d), 0, nil
	if dev.MIG {
		dev.MIGSlices, dev.Instances = migLayout(d, dev.MemoryMiB, false)
	}
}

// pciBusID reads the bus ID as NVML spells it (NUL-padded C string).
func pciBusID(d nvml.Device) string {
	p, ret := d.GetPciInfo()
	if ret != nvml.SUCCESS {
		return ""
	}
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// migEnabled reports the current MIG mode; GPUs without MIG support answer
// ERROR_NOT_SUPPORTED, which means "off".
func migEnabled(d nvml.Device) bool {
	cur, _, ret := d.GetMigMode()
	return ret == nvml.SUCCESS && cur == nvml.DEVICE_MIG_ENABLE
}

// Devices returns the identities read at Open, with the MIG mode and
// layout read anew (an admin may have reconfigured a GPU since).
func (b *Backend) Devices(ctx context.Context) ([]gpu.Device, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("agent: nvml: closed")
	}
	out := make([]gpu.Device, len(b.info))
	for i, d := range b.devices {
		out[i] = b.info[i]
		refreshMIG(d, &out[i])
	}
	return out, nil
}

// DriverVersion returns the driver version for the inventory, or "".
func (b *Backend) DriverVersion() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ""
	}
	v, ret := b.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		return ""
	}
	return v
}

// Close shuts NVML down. It is safe to call twice.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if ret := b.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("agent: nvml: shutdown: %w", ret)
	}
	return nil
}
