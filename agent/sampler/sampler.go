// Package sampler reads the GPUs at a fixed interval, attributes every GPU
// process to a user through /proc, and folds the samples into per-minute
// records per GPU and per (GPU, user). Detection and metrics consume the
// same Snapshot, so one NVML pass per interval feeds everything.
package sampler

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/procfs"
)

// Resolver maps a PID to its owner; procfs.Resolver implements it.
type Resolver interface {
	UID(pid int) (int, error)
	UserName(uid int) string
}

// containers is the optional part of a Resolver that finds a process's
// container (procfs.Resolver has it; test resolvers may not).
type containers interface {
	ContainerID(pid int) string
}

// Proc is a GPU process with its owner.
type Proc struct {
	PID    int
	UID    int
	User   string
	MemMiB int64
	// Container is the container id when the process runs in one ("" if not).
	Container string
}

// GPUState is one GPU at one instant, processes attributed.
type GPUState struct {
	Device      gpu.Device
	UtilValid   bool
	UtilPct     float64
	MemUsedMiB  int64
	MemTotalMiB int64
	Procs       []Proc
	// Health readings as the source gave them (see gpu.Sample).
	TempC, PowerW, SMClockMHz, MemClockMHz gpu.Reading
	// Instances are the GPU's MIG instances (memory per instance).
	Instances []gpu.MIGInstance
	// MIGUnits are the GPU's MIG instances as units of their own, each
	// with the processes NVML lists on it attributed (see Units); empty
	// when MIG is off or NVML lists no instance.
	MIGUnits []GPUState
	// Vanished counts PIDs NVML listed that were gone from /proc by the
	// time we looked (normal at process exit; NVML also lists PIDs of other PID
	// namespaces that /proc here cannot show).
	Vanished int
}

// Snapshot is every GPU at one instant.
type Snapshot struct {
	At   time.Time
	GPUs []GPUState
}

// Units are the snapshot's bookable units, which usage records, detection
// and idle reports are about: each GPU, except that a GPU in MIG mode
// with instances is replaced by its instances (and gets no unit, hence no
// record, of its own: its processes all run on one of them).
func (s Snapshot) Units() []GPUState {
	out := make([]GPUState, 0, len(s.GPUs))
	for _, g := range s.GPUs {
		if len(g.MIGUnits) > 0 {
			out = append(out, g.MIGUnits...)
			continue
		}
		out = append(out, g)
	}
	return out
}

// Sampler turns gpu.Source samples into Snapshots.
type Sampler struct {
	src     gpu.Source
	res     Resolver
	devices map[string]gpu.Device
	log     *slog.Logger
}

// New returns a Sampler for the given devices (from src.Devices at start).
func New(src gpu.Source, res Resolver, devices []gpu.Device, log *slog.Logger) *Sampler {
	m := make(map[string]gpu.Device, len(devices))
	for _, d := range devices {
		m[d.UUID] = d
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sampler{src: src, res: res, devices: m, log: log}
}

// Sample reads every GPU once, stamped with now. A partial read (one GPU
// failing) still returns the GPUs that answered, with the error.
func (s *Sampler) Sample(ctx context.Context, now time.Time) (Snapshot, error) {
	raw, err := s.src.Sample(ctx)
	snap := Snapshot{At: now, GPUs: make([]GPUState, 0, len(raw))}
	for _, r := range raw {
		d, ok := s.devices[r.UUID]
		if !ok {
			d = gpu.Device{UUID: r.UUID, Index: -1, Model: "unknown", MemoryMiB: r.MemTotalMiB}
		}
		d.MIG, d.MIGSlices, d.Instances = r.MIG, r.MIGSlices, r.Instances
		st := GPUState{Device: d, UtilValid: r.UtilValid && !r.MIG, UtilPct: r.UtilPct,
			MemUsedMiB: r.MemUsedMiB, MemTotalMiB: r.MemTotalMiB, TempC: r.TempC, PowerW: r.PowerW,
			SMClockMHz: r.SMClockMHz, MemClockMHz: r.MemClockMHz, Instances: r.Instances}
		if !st.UtilValid {
			st.UtilPct = 0
		}
		s.attribute(&st, r.Processes)
		if r.MIG {
			st.MIGUnits = s.migUnits(st, r.Instances)
		}
		snap.GPUs = append(snap.GPUs, st)
	}
	return snap, err
}

// migUnits makes one unit per MIG instance of g: the instance's UUID,
// memory and processes, its GPU's index, minor and model, no utilisation
// (NVML measures none on MIG).
func (s *Sampler) migUnits(g GPUState, instances []gpu.MIGInstance) []GPUState {
	out := make([]GPUState, 0, len(instances))
	for _, in := range instances {
		d := g.Device
		d.UUID, d.MemoryMiB, d.Parent, d.Profile, d.MIGSlices, d.Instances = in.UUID, in.MemTotalMiB, g.Device.UUID, in.Profile, 0, nil
		u := GPUState{Device: d, MemUsedMiB: in.MemUsedMiB, MemTotalMiB: in.MemTotalMiB}
		s.attribute(&u, in.Processes)
		out = append(out, u)
	}
	return out
}

// attribute resolves each PID's owner. Vanished PIDs are counted, not errors.
func (s *Sampler) attribute(st *GPUState, procs []gpu.Process) {
	for _, p := range procs {
		uid, err := s.res.UID(p.PID)
		if errors.Is(err, procfs.ErrGone) {
			st.Vanished++
			continue
		}
		if err != nil {
			s.log.Warn("agent: sampler: resolve pid", "pid", p.PID, "gpu", st.Device.UUID, "err", err)
			st.Vanished++
			continue
		}
		pr := Proc{PID: p.PID, UID: uid, User: s.res.UserName(uid), MemMiB: p.MemMiB}
		if c, ok := s.res.(containers); ok {
			pr.Container = c.ContainerID(p.PID)
		}
		st.Procs = append(st.Procs, pr)
	}
}
