package daemon

import (
	"encoding/json"
	"time"

	"github.com/gpubook/gpubook/agent/atomicfile"
)

// Status is the node's view that `gpubook-agent status` prints. The daemon
// rewrites it after every sample so the command needs neither root nor NVML.
type Status struct {
	Node        string    `json:"node"`
	At          time.Time `json:"at"`
	NVMLOK      bool      `json:"nvml_ok"`
	SampleError string    `json:"sample_error,omitempty"`
	// SampleFailingSince is when samples began failing (zero while they work).
	SampleFailingSince time.Time `json:"sample_failing_since,omitzero"`
	LastSync           time.Time `json:"last_sync"`
	SyncError          string    `json:"sync_error,omitempty"`
	ScheduleETag       string    `json:"schedule_etag,omitempty"`
	ScheduleAt         time.Time `json:"schedule_fetched_at"`
	SpoolDepth         int       `json:"spool_depth"`
	SpoolBytes         int64     `json:"spool_bytes"`
	OldestSpooled      time.Time `json:"oldest_spooled"`
	// Degraded states, each shown by `status` and sent in the heartbeat.
	NVMLDownSince  time.Time        `json:"nvml_down_since,omitzero"`
	NVMLError      string           `json:"nvml_error,omitempty"`
	SetAside       int              `json:"spool_set_aside"`
	SetAsideReason string           `json:"spool_set_aside_reason,omitempty"`
	Dropped        map[string]int64 `json:"spool_dropped,omitempty"`
	MetricsProblem string           `json:"metrics_problem,omitempty"`
	Lock           string           `json:"lock,omitempty"`
	LockError      string           `json:"lock_error,omitempty"`
	GPUs           []GPUStatus      `json:"gpus"`
}

// GPUStatus is one GPU in Status.
type GPUStatus struct {
	Index       int          `json:"index"`
	UUID        string       `json:"uuid"`
	Model       string       `json:"model"`
	MIG         bool         `json:"mig"`
	UtilValid   bool         `json:"util_valid"`
	UtilPct     float64      `json:"util_pct"`
	MemUsedMiB  int64        `json:"mem_used_mib"`
	MemTotalMiB int64        `json:"mem_total_mib"`
	Holder      string       `json:"holder,omitempty"`
	BookingID   int64        `json:"booking_id,omitempty"`
	HeldUntil   time.Time    `json:"held_until,omitzero"`
	Procs       []ProcStatus `json:"procs"`
}

// ProcStatus is one process in GPUStatus.
type ProcStatus struct {
	PID    int    `json:"pid"`
	User   string `json:"user"`
	MemMiB int64  `json:"mem_mib"`
}

// CurrentStatus assembles Status from the latest snapshot and sync state.
func (d *Daemon) CurrentStatus() Status {
	sp := d.deps.Spool.Stats()
	d.mu.Lock()
	defer d.mu.Unlock()
	st := Status{Node: d.cfg.Node, At: d.lastSnap.At, NVMLOK: d.sampler != nil, SampleError: d.sampleErr, SampleFailingSince: d.sampleFailing,
		LastSync: d.lastSync, SyncError: d.syncErr, ScheduleETag: d.sched.ETag, ScheduleAt: d.sched.FetchedAt,
		SpoolDepth: sp.Depth, SpoolBytes: sp.Bytes, OldestSpooled: sp.Oldest, NVMLDownSince: d.nvmlDown, NVMLError: d.nvmlErr,
		SetAside: sp.SetAside, SetAsideReason: sp.SetAsideReason, Dropped: sp.Dropped, MetricsProblem: d.cfg.MetricsProblem,
		Lock: d.lockModeLocked(), LockError: d.lockErr}
	if st.At.IsZero() {
		st.At = d.deps.Now().UTC() // no sample yet: the file's time says the daemon runs
	}
	for _, g := range d.lastSnap.GPUs {
		gs := GPUStatus{Index: g.Device.Index, UUID: g.Device.UUID, Model: g.Device.Model, MIG: g.Device.MIG,
			UtilValid: g.UtilValid, UtilPct: g.UtilPct, MemUsedMiB: g.MemUsedMiB, MemTotalMiB: g.MemTotalMiB, Procs: []ProcStatus{}}
		for _, b := range d.sched.Schedule.Bookings {
			if b.HasGPU(g.Device.UUID) && b.ActiveAt(d.lastSnap.At) {
				gs.Holder, gs.BookingID, gs.HeldUntil = b.User, b.ID, b.EndsAt
			}
		}
		for _, p := range g.Procs {
			gs.Procs = append(gs.Procs, ProcStatus{PID: p.PID, User: p.User, MemMiB: p.MemMiB})
		}
		st.GPUs = append(st.GPUs, gs)
	}
	return st
}

// writeStatus stores CurrentStatus for the status command; failures are
// logged only, a status file is never worth stopping the sampler for.
func (d *Daemon) writeStatus() {
	if d.cfg.StatusPath == "" {
		return
	}
	data, err := json.MarshalIndent(d.CurrentStatus(), "", "  ")
	if err == nil {
		err = atomicfile.Replace(d.cfg.StatusPath, data, 0o644) // rewritten every sample: no fsyncs
	}
	if err != nil {
		d.log.Warn("agent: write status", "err", err)
	}
}
