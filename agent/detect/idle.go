package detect

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

// memState is one GPU holding memory with no visible process.
type memState struct {
	v        wire.Violation
	reported bool
}

// checkMemory reports GPUs whose memory stays used with no process NVML can
// show us (zombies, processes stuck in D state, other PID namespaces).
func (d *Detector) checkMemory(snap sampler.Snapshot) []wire.Violation {
	now := snap.At
	var out []wire.Violation
	for _, g := range snap.Units() {
		uuid := g.Device.UUID
		st := d.mem[uuid]
		if g.MemUsedMiB < d.pol.MemNoProcMiB || len(g.Procs) > 0 {
			if st != nil && st.reported {
				out = append(out, st.v) // final LastSeen
			}
			delete(d.mem, uuid)
			continue
		}
		if st == nil {
			st = &memState{v: wire.Violation{
				ID:   fmt.Sprintf("%s:%s:%s:0:%d", d.node, wire.ViolationMemoryNoProcess, uuid, now.Unix()),
				Kind: wire.ViolationMemoryNoProcess, GPUUUID: uuid, UID: -1, FirstSeen: now, Action: wire.ActionNone,
			}}
			d.mem[uuid] = st
		}
		st.v.LastSeen = now
		st.v.MemoryMiB = max(st.v.MemoryMiB, g.MemUsedMiB)
		if !st.reported && !now.Before(st.v.FirstSeen.Add(d.pol.MemNoProcAfter)) {
			st.reported = true
			out = append(out, st.v)
		}
	}
	return out
}

// idleState is one active booking's idle GPUs.
type idleState struct {
	since    map[string]time.Time // GPU UUID → idle since
	reported []string             // the GPU set last reported
}

// checkIdle reports active bookings whose GPUs show low utilisation and no
// process for IdleAfter. It reports again only when the idle set grows.
func (d *Detector) checkIdle(snap sampler.Snapshot, bookings []wire.Booking) []wire.IdleReport {
	now := snap.At
	units := snap.Units()
	byUUID := make(map[string]sampler.GPUState, len(units))
	for _, g := range units {
		byUUID[g.Device.UUID] = g
	}
	active := map[int64]bool{}
	var out []wire.IdleReport
	for _, b := range bookings {
		if !b.ActiveAt(now) {
			continue
		}
		active[b.ID] = true
		if r, ok := d.idleBooking(b, byUUID, now); ok {
			out = append(out, r)
		}
	}
	for id := range d.idle {
		if !active[id] {
			delete(d.idle, id)
		}
	}
	return out
}

func (d *Detector) idleBooking(b wire.Booking, gpus map[string]sampler.GPUState, now time.Time) (wire.IdleReport, bool) {
	st, ok := d.idle[b.ID]
	if !ok {
		st = &idleState{since: map[string]time.Time{}}
		d.idle[b.ID] = st
	}
	var idle []string
	var earliest time.Time
	for _, uuid := range b.GPUUUIDs {
		g, here := gpus[uuid]
		if !here {
			continue // not on this node, or did not answer this time
		}
		if len(g.Procs) > 0 || g.Vanished > 0 || (g.UtilValid && g.UtilPct >= d.pol.IdleUtilPct) {
			delete(st.since, uuid)
			continue
		}
		since, seen := st.since[uuid]
		if !seen {
			since = now
			st.since[uuid] = now
		}
		if !now.Before(since.Add(d.pol.IdleAfter)) {
			idle = append(idle, uuid)
			if earliest.IsZero() || since.Before(earliest) {
				earliest = since
			}
		}
	}
	sort.Strings(idle)
	if len(idle) == 0 {
		st.reported = nil
		return wire.IdleReport{}, false
	}
	if len(idle) <= len(st.reported) && isSubset(idle, st.reported) {
		return wire.IdleReport{}, false
	}
	st.reported = idle
	return wire.IdleReport{ID: fmt.Sprintf("%s:%d:%d", d.node, b.ID, earliest.Unix()), BookingID: b.ID, User: b.User,
		GPUUUIDs: slices.Clone(idle), IdleSince: earliest, ReportedAt: now}, true
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
