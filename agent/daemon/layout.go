package daemon

import (
	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/sampler"
)

// followLayout takes each GPU's MIG mode and layout from a sample: when
// an admin turns MIG on or off or reconfigures the instances, the
// inventory is sent again (the portal adds the new instances and retires
// the gone ones) and the cache's GPU list follows at the next sync. A GPU
// that did not answer keeps what was last seen.
func (d *Daemon) followLayout(snap sampler.Snapshot) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, g := range snap.GPUs {
		for i := range d.devices {
			dev := &d.devices[i]
			if dev.UUID != g.Device.UUID || sameLayout(*dev, g.Device) {
				continue
			}
			d.log.Info("agent: MIG layout changed; sending the inventory again", "gpu", dev.Index,
				"mig", g.Device.MIG, "instances", len(g.Device.Instances))
			dev.MIG, dev.MIGSlices, dev.Instances = g.Device.MIG, g.Device.MIGSlices, layoutOnly(g.Device.Instances)
			d.invSent = false
		}
	}
}

// sameLayout compares what the inventory says of a GPU's MIG layout.
func sameLayout(a, b gpu.Device) bool {
	if a.MIG != b.MIG || a.MIGSlices != b.MIGSlices || len(a.Instances) != len(b.Instances) {
		return false
	}
	for i, x := range a.Instances {
		y := b.Instances[i]
		if x.UUID != y.UUID || x.Profile != y.Profile || x.GPUInstanceID != y.GPUInstanceID ||
			x.ComputeInstanceID != y.ComputeInstanceID || x.Slices != y.Slices || x.MemTotalMiB != y.MemTotalMiB {
			return false
		}
	}
	return true
}

// layoutOnly drops what a sample adds to instances (memory used, processes).
func layoutOnly(in []gpu.MIGInstance) []gpu.MIGInstance {
	if len(in) == 0 {
		return nil
	}
	out := make([]gpu.MIGInstance, len(in))
	for i, x := range in {
		x.MemUsedMiB, x.Processes = 0, nil
		out[i] = x
	}
	return out
}
