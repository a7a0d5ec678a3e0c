package detect

import (
	"fmt"
	"syscall"
	"time"

	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

type procKey struct {
	uuid string
	pid  int
}

// procState is one violating process across observations.
type procState struct {
	v          wire.Violation
	graceStart time.Time // when the grace period began (first seen, or the booking's end)
	termAt     time.Time
	start      uint64 // the process's start time when first seen (0: unknown)
	seen       bool
}

// checkProcs finds processes without a booking, warns, escalates and
// reports; a process that is gone gets a last update with its LastSeen.
func (d *Detector) checkProcs(snap sampler.Snapshot, bookings []wire.Booking) []wire.Violation {
	now := snap.At
	var out []wire.Violation
	for _, st := range d.procs {
		st.seen = false
	}
	for _, g := range snap.Units() {
		for _, p := range g.Procs {
			if d.exempt(p) {
				continue
			}
			k := procKey{g.Device.UUID, p.PID}
			if b, ok := activeBooking(bookings, p.User, g.Device, now); ok {
				if st, was := d.procs[k]; was { // a booking now covers it: close the episode
					delete(d.procs, k)
					out = append(out, st.v)
				}
				d.warnOverstay(b, bookings, g, p, now)
				continue
			}
			if v, changed := d.violating(k, g, p, now); changed {
				out = append(out, v)
			}
		}
	}
	for k, st := range d.procs {
		if !st.seen {
			delete(d.procs, k)
			out = append(out, st.v) // final LastSeen
		}
	}
	return out
}

// violating updates one violating process; changed is true when the portal
// should hear about it (new, or the action escalated).
func (d *Detector) violating(k procKey, g sampler.GPUState, p sampler.Proc, now time.Time) (wire.Violation, bool) {
	st, ok := d.procs[k]
	if ok && st.start != 0 && d.startTime(p.PID) != st.start {
		// Same PID, another process (reused, e.g. after an agent restart):
		// the old episode ends, the new process gets its own grace.
		delete(d.procs, k)
		ok = false
	}
	if !ok {
		st = d.newViolation(k, g, p, now)
		d.procs[k] = st
		d.notify(p, fmt.Sprintf("gpubook: your process %d runs on %s, which you have not booked now. It has been reported.%s",
			p.PID, g.Device.Label(), d.consequence()))
		return st.v, true
	}
	st.seen = true
	st.v.LastSeen = now
	st.v.MemoryMiB = max(st.v.MemoryMiB, p.MemMiB)
	if !d.pol.Enforce {
		return st.v, false
	}
	switch {
	case (st.v.Action == wire.ActionWarned || st.v.Action == wire.ActionNone) && !now.Before(st.graceStart.Add(d.pol.Grace)):
		if d.signal(st, p, syscall.SIGTERM) {
			st.v.Action, st.termAt = wire.ActionSIGTERM, now
			return st.v, true
		}
	case st.v.Action == wire.ActionSIGTERM && !now.Before(st.termAt.Add(d.pol.KillAfter)):
		if d.signal(st, p, syscall.SIGKILL) {
			st.v.Action = wire.ActionSIGKILL
			return st.v, true
		}
	}
	return st.v, false
}

// newViolation classifies a first sighting: overstay when the user's
// booking of this GPU ended within the last 24 h, unbooked use otherwise.
func (d *Detector) newViolation(k procKey, g sampler.GPUState, p sampler.Proc, now time.Time) *procState {
	kind, bookingID, graceStart := wire.ViolationUnbooked, int64(0), now
	var latest time.Time
	for _, b := range d.history {
		if b.User == p.User && holds(b, g.Device) && !b.EndsAt.After(now) && b.EndsAt.After(latest) {
			kind, bookingID, graceStart, latest = wire.ViolationOverstay, b.ID, b.EndsAt, b.EndsAt
		}
	}
	v := wire.Violation{
		ID:   fmt.Sprintf("%s:%s:%s:%d:%d", d.node, kind, k.uuid, k.pid, now.Unix()),
		Kind: kind, GPUUUID: k.uuid, User: p.User, UID: p.UID, PID: p.PID, MemoryMiB: p.MemMiB,
		BookingID: bookingID, Container: p.Container, FirstSeen: now, LastSeen: now, Action: d.firstAction(),
	}
	return &procState{v: v, graceStart: graceStart, start: d.startTime(p.PID), seen: true}
}

// firstAction is what a new violation says the agent did: it warned the
// user's terminals, unless there is no notifier (enforce = off), where
// it only reports and must not claim a warning nobody was sent.
func (d *Detector) firstAction() string {
	if d.note == nil {
		return wire.ActionNone
	}
	return wire.ActionWarned
}

func (d *Detector) startTime(pid int) uint64 {
	t, err := d.owners.StartTime(pid)
	if err != nil {
		return 0
	}
	return t
}

// signal sends sig after checking that pid still belongs to the same user
// and is the same process (a PID reused since the sample must never be
// hit), and never to UID 0, whatever the exemption rules say.
func (d *Detector) signal(st *procState, p sampler.Proc, sig syscall.Signal) bool {
	uid, err := d.owners.UID(p.PID)
	if err != nil || uid != p.UID || uid == 0 {
		return false
	}
	if now := d.startTime(p.PID); st.start == 0 || now != st.start {
		d.log.Warn("agent: detect: not signalling, start time unknown or changed (PID reused?)", "pid", p.PID, "was", st.start, "now", now)
		return false
	}
	if err := d.sig.Signal(p.PID, sig); err != nil {
		d.log.Warn("agent: detect: signal", "pid", p.PID, "signal", sig.String(), "err", err)
		return false
	}
	d.log.Info("agent: detect: signalled", "pid", p.PID, "user", p.User, "signal", sig.String())
	return true
}

// warnOverstay tells a user, once per booking, that it ends soon while their
// processes still run — unless a booking of theirs continues on that GPU.
func (d *Detector) warnOverstay(b wire.Booking, bookings []wire.Booking, g sampler.GPUState, p sampler.Proc, now time.Time) {
	if d.warned[b.ID] || b.EndsAt.Sub(now) > d.pol.OverstayWarning {
		return
	}
	if _, continues := activeBooking(bookings, p.User, g.Device, b.EndsAt); continues {
		return
	}
	d.warned[b.ID] = true
	d.notify(p, fmt.Sprintf("gpubook: your booking of %s ends at %s; process %d is still running.%s",
		g.Device.Label(), b.EndsAt.Local().Format("15:04"), p.PID, d.consequence()))
}

func (d *Detector) consequence() string {
	if d.pol.Enforce {
		return fmt.Sprintf(" Processes without a booking are stopped after %s.", d.pol.Grace)
	}
	return ""
}

func (d *Detector) notify(p sampler.Proc, msg string) {
	if d.note == nil {
		return
	}
	if err := d.note.Notify(p.UID, p.User, msg); err != nil {
		d.log.Debug("agent: detect: notify", "user", p.User, "err", err)
	}
}
