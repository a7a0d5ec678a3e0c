package wire

import (
	"crypto/sha256"
	"fmt"
)

// The simulated GPUs' identities (gpu = simulated, agent/simgpu): a GPU's
// and a MIG instance's UUID are derived from the node's name, the GPU's
// index and the instance's GPU instance id, so that a restarted agent, or
// another one on the same config, reports the same units, and so that
// `gpubook demo` can seed what its simulated agents will report (the
// portal cannot import agent/simgpu, which needs cgo). Declared once here,
// where both sides compile; changing it orphans every simulated unit a
// portal knows (their bookings then move or end as on a reconfiguration).

// SimulatedGPUUUID is the UUID of a simulated node's GPU i, in NVML's
// "GPU-…" format.
func SimulatedGPUUUID(node string, i int) string {
	return simulatedUUID("GPU", fmt.Sprintf("gpubook-sim/%s/%d", node, i))
}

// SimulatedMIGUUID is the UUID of the MIG instance of a simulated node's
// GPU i whose GPU instance id is gi (from 1, in the layout's order), in
// NVML's "MIG-…" format.
func SimulatedMIGUUID(node string, i, gi int) string {
	return simulatedUUID("MIG", fmt.Sprintf("gpubook-sim/%s/%d/gi%d", node, i, gi))
}

func simulatedUUID(prefix, seed string) string {
	h := sha256.Sum256([]byte(seed))
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
