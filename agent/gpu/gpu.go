// Package gpu is the agent's view of the GPUs, independent of NVML. The
// sampler, detection and metrics consume this interface so they compile and
// test without cgo; agent/nvmlgpu implements it with go-nvml.
package gpu

import "context"

// Device is one GPU's identity, read once at start.
type Device struct {
	UUID      string
	Index     int
	Minor     int // /dev/nvidiaN
	Model     string
	MemoryMiB int64
	MIG       bool
	PCIBusID  string // "00000000:07:00.0", the label dashboards join on; "" when unknown
}

// Process is one process NVML lists on a GPU. PID is a host PID.
type Process struct {
	PID    int
	MemMiB int64
}

// Sample is one GPU at one instant.
type Sample struct {
	UUID string
	// UtilValid is false on MIG-enabled GPUs (NVML cannot measure the whole
	// GPU there) and when the driver did not answer; UtilPct is then 0.
	UtilValid   bool
	UtilPct     float64
	MemUsedMiB  int64
	MemTotalMiB int64
	MIG         bool
	Processes   []Process
	// Health readings for /metrics; a reading the driver did not give has
	// OK false and is left out of the exposition.
	TempC, PowerW, SMClockMHz, MemClockMHz Reading
	// Instances are the GPU's MIG instances, when MIG is on and NVML lists
	// them: each gets its own memory series in /metrics.
	Instances []MIGInstance
}

// MIGInstance is one MIG device of a GPU as NVML shows it.
type MIGInstance struct {
	UUID              string
	GPUInstanceID     int
	ComputeInstanceID int
	MemUsedMiB        int64
	MemTotalMiB       int64
}

// Reading is one optional sensor value.
type Reading struct {
	V  float64
	OK bool
}

// Source is what the agent needs from a GPU backend.
type Source interface {
	// Devices lists the node's GPUs in NVML index order.
	Devices(ctx context.Context) ([]Device, error)
	// Sample reads every GPU once. A GPU that fails to answer is left out
	// and reported in the error, the others are still returned.
	Sample(ctx context.Context) ([]Sample, error)
}
