package wire_test

import (
	"testing"

	"github.com/gpubook/gpubook/models/wire"
)

// TestSimulatedUUIDs pins the simulated identities: the demo seeds them and
// portals keep them, so a change would orphan every simulated unit known.
// The values are those agent/simgpu reported before the formula moved here.
func TestSimulatedUUIDs(t *testing.T) {
	if got, want := wire.SimulatedGPUUUID("gpu-a100-01", 7), "GPU-cec4613d-ed05-378d-cdbc-082017adb3a1"; got != want {
		t.Errorf("SimulatedGPUUUID = %s, want %s", got, want)
	}
	if got, want := wire.SimulatedMIGUUID("gpu-a100-01", 7, 1), "MIG-860bb6fd-a4dc-aa15-9ad9-1fba76c02f0c"; got != want {
		t.Errorf("SimulatedMIGUUID = %s, want %s", got, want)
	}
	for _, u := range []string{wire.SimulatedGPUUUID("n", 0), wire.SimulatedMIGUUID("n", 0, 1)} {
		if !wire.ValidGPUUUID(u) {
			t.Errorf("simulated UUID %s is not one agents may send", u)
		}
	}
}
