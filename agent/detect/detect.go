// Package detect turns Snapshots and the schedule into violations (unbooked
// use, overstay, memory held with no process) and idle-booking reports, and
// applies the node's enforcement policy. Signals and terminal messages go
// through small interfaces so tests observe them instead of killing anything.
package detect

import (
	"log/slog"
	"syscall"
	"time"

	"github.com/gpubook/gpubook/agent/exempt"
	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

// Policy is the node's detection and enforcement settings.
type Policy struct {
	Exempt exempt.Rules
	// Enforce: false (the default) only warns and reports; true sends SIGTERM
	// after Grace and SIGKILL KillAfter later.
	Enforce         bool
	Grace           time.Duration
	KillAfter       time.Duration
	OverstayWarning time.Duration // warn this long before a booking ends
	IdleUtilPct     float64       // below this, with no process, a GPU is idle
	IdleAfter       time.Duration // idle this long → reported
	MemNoProcMiB    int64         // memory used with no process at or above this…
	MemNoProcAfter  time.Duration // …for this long → reported
}

// DefaultPolicy is warn-only with the thresholds from the issue.
func DefaultPolicy() Policy {
	return Policy{Exempt: exempt.Default(), Grace: 5 * time.Minute, KillAfter: 30 * time.Second,
		OverstayWarning: 10 * time.Minute, IdleUtilPct: 5, IdleAfter: 30 * time.Minute,
		MemNoProcMiB: 1024, MemNoProcAfter: 5 * time.Minute}
}

// Signaller sends a signal to a process; syscall.Kill in production.
type Signaller interface {
	Signal(pid int, sig syscall.Signal) error
}

// Notifier writes a short message to a user's terminals.
type Notifier interface {
	Notify(uid int, user, msg string) error
}

// Owners tells the detector who owns a PID right now and which groups a user
// is in; procfs.Resolver implements it. The UID check before a signal
// guards against a PID that was reused since the sample.
type Owners interface {
	UID(pid int) (int, error)
	UserGroups(user string) []string
	// StartTime tells a process from a later one with the same PID.
	StartTime(pid int) (uint64, error)
}

// Events is what one observation produced, for the spool and the metrics.
type Events struct {
	Violations []wire.Violation
	Idle       []wire.IdleReport
}

// Detector keeps the state between observations: when each violation was
// first seen, what was done about it, how long each GPU has been idle.
type Detector struct {
	node   string
	pol    Policy
	sig    Signaller
	note   Notifier
	owners Owners
	log    *slog.Logger

	procs   map[procKey]*procState
	mem     map[string]*memState
	idle    map[int64]*idleState
	warned  map[int64]bool
	history map[int64]wire.Booking // bookings seen, to recognise an overstay
}

// New returns a Detector for node.
func New(node string, pol Policy, sig Signaller, note Notifier, owners Owners, log *slog.Logger) *Detector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Detector{node: node, pol: pol, sig: sig, note: note, owners: owners, log: log,
		procs: map[procKey]*procState{}, mem: map[string]*memState{}, idle: map[int64]*idleState{},
		warned: map[int64]bool{}, history: map[int64]wire.Booking{}}
}

// Observe checks one snapshot against the bookings and returns what is new.
// It looks at the snapshot's units: a process on a MIG instance is booked
// when its user holds that instance, and its violation names the instance.
func (d *Detector) Observe(snap sampler.Snapshot, bookings []wire.Booking) Events {
	now := snap.At
	for _, b := range bookings {
		d.history[b.ID] = b
	}
	for id, b := range d.history {
		if b.EndsAt.Before(now.Add(-24 * time.Hour)) {
			delete(d.history, id)
			delete(d.warned, id)
		}
	}
	var ev Events
	ev.Violations = append(ev.Violations, d.checkProcs(snap, bookings)...)
	ev.Violations = append(ev.Violations, d.checkMemory(snap)...)
	ev.Idle = d.checkIdle(snap, bookings)
	return ev
}

// exempt applies the exemption rules with group lookup through Owners.
func (d *Detector) exempt(p sampler.Proc) bool {
	return d.pol.Exempt.Exempt(p.User, p.UID, d.owners.UserGroups)
}

// activeBooking returns the user's booking that holds unit d at t.
func activeBooking(bookings []wire.Booking, user string, d gpu.Device, t time.Time) (wire.Booking, bool) {
	for _, b := range bookings {
		if b.User == user && holds(b, d) && b.ActiveAt(t) {
			return b, true
		}
	}
	return wire.Booking{}, false
}

// holds reports whether b names unit d: its UUID, or, for a MIG instance,
// its GPU's (the portal never books a GPU in MIG mode whole, but a booking
// that does covers all of it).
func holds(b wire.Booking, d gpu.Device) bool {
	return b.HasGPU(d.UUID) || d.Parent != "" && b.HasGPU(d.Parent)
}
