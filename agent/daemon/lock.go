package daemon

import (
	"strings"
	"time"

	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

// Locker is what the daemon needs from agent/lock in `enforce = lock`
// mode: bring every user's device rules in line with the schedule.
type Locker interface {
	Sync(now time.Time, bookings []wire.Booking, gpus []lock.GPU, migs []lock.MIGInstance) error
}

// syncLock runs the device lock after each sample, so a booking's GPUs
// open (and close) within one sample interval. Without GPUs (NVML down)
// it does nothing: the rules stay as they were rather than guessed. An
// error is logged when it changes, not every sample.
func (d *Daemon) syncLock(snap sampler.Snapshot, bookings []wire.Booking) {
	if d.deps.Lock == nil {
		return
	}
	d.mu.Lock()
	gpus := make([]lock.GPU, 0, len(d.devices))
	var migs []lock.MIGInstance
	d.migs = migsSeen(d.migs, snap)
	for _, g := range d.devices {
		list, mig := d.migs[g.UUID]
		gpus = append(gpus, lock.GPU{UUID: g.UUID, Minor: g.Minor, MIG: mig})
		migs = append(migs, list...)
	}
	d.mu.Unlock()
	// One line: errors.Join's newlines would make the heartbeat invalid.
	err := d.deps.Lock.Sync(snap.At, bookings, gpus, migs)
	msg := strings.Join(strings.Fields(errString(err)), " ")
	d.reportRefusals(snap.At, gpus)
	d.mu.Lock()
	changed := msg != d.lockErr
	d.lockErr = msg
	if err == nil {
		d.lockGuards = len(gpus)
	}
	d.mu.Unlock()
	if changed && msg != "" {
		d.log.Error("agent: lock: device rules not fully applied", "err", msg)
	} else if changed {
		d.log.Info("agent: lock: device rules applied")
	}
}

// lockStatus is the heartbeat's lock field: the mode, and the lock's last
// error when it did not apply. Called with d.mu held.
func (d *Daemon) lockStatus() string {
	s := d.lockModeLocked()
	if d.lockErr != "" {
		s += " (error: " + d.lockErr + ")"
	}
	if len(s) > wire.MaxLockLen {
		s = strings.ToValidUTF8(s[:wire.MaxLockLen], "")
	}
	return s
}

// migsSeen updates, from one sample, the GPUs known to be in MIG mode (the
// map's keys) with their instances: a GPU that answered replaces its entry
// (none when MIG is off); one that did not answer keeps the last, so that
// one failed NVML call does not close (or open) a MIG instance in the
// middle of a booking.
func migsSeen(known map[string][]lock.MIGInstance, snap sampler.Snapshot) map[string][]lock.MIGInstance {
	if known == nil {
		known = map[string][]lock.MIGInstance{}
	}
	for _, g := range snap.GPUs {
		if !g.Device.MIG {
			delete(known, g.Device.UUID)
			continue
		}
		list := make([]lock.MIGInstance, 0, len(g.Instances))
		for _, in := range g.Instances {
			list = append(list, lock.MIGInstance{UUID: in.UUID, ParentMinor: g.Device.Minor,
				GPUInstance: in.GPUInstanceID, ComputeInstance: in.ComputeInstanceID})
		}
		known[g.Device.UUID] = list
	}
	return known
}

// lockModeLocked is the mode as status and the node page show it: a lock
// that passed its self-check is called active only once a sync has written
// rules for the node's GPUs; before that (NVML down, no GPU listed) it says
// plainly that it guards nothing. Called with d.mu held.
func (d *Daemon) lockModeLocked() string {
	if d.deps.Lock == nil || d.lockGuards > 0 {
		return d.cfg.LockMode
	}
	why := "no GPU listed yet"
	if d.sampler == nil {
		why = "NVML lists no GPUs"
	}
	return d.cfg.LockMode + wire.LockGuardingNothing + why + ")"
}
