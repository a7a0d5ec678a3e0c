// Package gpu is the agent's view of the GPUs, independent of NVML. The
// sampler, detection and metrics consume this interface so they compile and
// test without cgo; agent/nvmlgpu implements it with go-nvml.
package gpu

import (
	"context"
	"fmt"
)

// Device is one GPU's identity, read once at start.
type Device struct {
	UUID      string
	Index     int
	Minor     int // /dev/nvidiaN
	Model     string
	MemoryMiB int64
	MIG       bool
	PCIBusID  string // "00000000:07:00.0", the label dashboards join on; "" when unknown
	// MIGSlices is the GPU's compute slices (7 on an A100 or H100) while
	// MIG is on, 0 otherwise: an instance weighs its Slices over it.
	MIGSlices int
	// Instances are the GPU's MIG instances while MIG is on: the units
	// that are booked, sampled and enforced instead of the whole GPU.
	Instances []MIGInstance
	// Parent is, on a MIG instance seen as a unit of its own (see
	// sampler.Snapshot.Units), its GPU's UUID; "" on a GPU.
	Parent string
	// Profile is, on such a unit, the instance's profile ("1g.10gb").
	Profile string
}

// Label names a unit for people as the portal does: "GPU 3", or the
// parent's index and the profile for a MIG instance ("GPU 3 1g.10gb").
func (d Device) Label() string {
	if d.Parent != "" {
		return fmt.Sprintf("GPU %d %s", d.Index, d.Profile)
	}
	return fmt.Sprintf("GPU %d", d.Index)
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
	// MIGSlices and Instances are the GPU's MIG layout now, when MIG is on
	// and NVML lists instances (a layout changes when an admin
	// reconfigures the GPU); each instance gets its own usage record and
	// memory series in /metrics.
	MIGSlices int
	Instances []MIGInstance
}

// MIGInstance is one MIG device of a GPU as NVML shows it: a GPU
// instance with its compute instance, a unit of its own for bookings.
type MIGInstance struct {
	UUID              string
	GPUInstanceID     int
	ComputeInstanceID int
	// Profile is NVML's profile name ("1g.10gb", "3g.40gb", "1g.10gb+me");
	// Slices the compute slices it holds.
	Profile     string
	Slices      int
	MemUsedMiB  int64
	MemTotalMiB int64
	// Processes are those NVML lists on the instance's own handle (in a
	// Sample; Devices leaves them out).
	Processes []Process
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
