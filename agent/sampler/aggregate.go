package sampler

import (
	"sort"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// Aggregator folds Snapshots into one record per unit (a GPU, or a MIG
// instance of a GPU in MIG mode: Snapshot.Units) per minute. A minute is
// emitted once a snapshot of a later minute arrives (or at Flush, or by
// Complete after a restart), so every record is complete and emitted once.
// Save and Load carry the minute in progress across a crash.
type Aggregator struct {
	// BusyPct is the utilisation at or above which a user's process counts
	// as busy (the idle threshold, 5 % by default).
	BusyPct float64
	// After drops snapshots whose minute is not after it: the last minute
	// emitted, by this run or (at start) by a previous one that spooled it,
	// so that no key is ever emitted twice.
	After time.Time
	accs  map[string]*minuteAcc
}

type minuteAcc struct {
	rec       wire.UsageRecord
	utilSum   float64
	utilMax   float64
	utilCount int
	users     map[string]*wire.UserUsage
	// containerMem is, per user, the memory in the sample that chose the
	// user's Container: a later sample names another container only with more.
	containerMem map[string]int64
}

// NewAggregator returns an Aggregator with the given busy threshold.
func NewAggregator(busyPct float64, after time.Time) *Aggregator {
	return &Aggregator{BusyPct: busyPct, After: after.UTC().Truncate(time.Minute), accs: map[string]*minuteAcc{}}
}

// Add folds snap in and returns the records of minutes that are now complete,
// oldest first.
func (a *Aggregator) Add(snap Snapshot) []wire.UsageRecord {
	minute := snap.At.UTC().Truncate(time.Minute)
	if pending := a.Pending(); minute.Before(pending) {
		return nil // late for a minute already left behind: it must not land in the newer one
	}
	done := a.Complete(minute)
	if !minute.After(a.After) {
		return done
	}
	for _, g := range snap.Units() {
		a.addGPU(minute, g)
	}
	return done
}

// Flush returns every partial minute (at shutdown) and forgets them.
func (a *Aggregator) Flush() []wire.UsageRecord {
	var done []wire.UsageRecord
	for uuid, acc := range a.accs {
		done = append(done, a.emit(acc))
		delete(a.accs, uuid)
	}
	return sortRecords(done)
}

func (a *Aggregator) addGPU(minute time.Time, g GPUState) {
	acc, ok := a.accs[g.Device.UUID]
	if !ok {
		acc = &minuteAcc{rec: wire.UsageRecord{GPUUUID: g.Device.UUID, Minute: minute}, users: map[string]*wire.UserUsage{},
			containerMem: map[string]int64{}}
		a.accs[g.Device.UUID] = acc
	}
	acc.rec.Samples++
	acc.rec.MemUsedMiB = max(acc.rec.MemUsedMiB, g.MemUsedMiB)
	acc.rec.MemTotalMiB = max(acc.rec.MemTotalMiB, g.MemTotalMiB)
	if g.UtilValid {
		acc.utilSum += g.UtilPct
		acc.utilMax = max(acc.utilMax, g.UtilPct)
		acc.utilCount++
	}
	busy := !g.UtilValid || g.UtilPct >= a.BusyPct
	perUser := map[string]*wire.UserUsage{}
	inContainers := map[string]map[string]int64{} // user → container → memory in this sample
	for _, p := range g.Procs {
		u, ok := perUser[p.User]
		if !ok {
			u = &wire.UserUsage{User: p.User, UID: p.UID}
			perUser[p.User] = u
		}
		u.MemoryMiB += p.MemMiB
		u.Processes++
		if p.Container != "" {
			if inContainers[p.User] == nil {
				inContainers[p.User] = map[string]int64{}
			}
			inContainers[p.User][p.Container] += p.MemMiB
		}
	}
	for name, cur := range perUser {
		u, ok := acc.users[name]
		if !ok {
			u = &wire.UserUsage{User: name, UID: cur.UID}
			acc.users[name] = u
		}
		u.MemoryMiB = max(u.MemoryMiB, cur.MemoryMiB)
		u.Processes = max(u.Processes, cur.Processes)
		u.Busy = u.Busy || busy
		if id, mem := biggestContainer(inContainers[name]); id != "" && replaces(id, mem, u.Container, acc.containerMem[name]) {
			u.Container, acc.containerMem[name] = id, mem
		}
	}
}

// biggestContainer is the container holding the most memory in byContainer
// (the smallest id among equals, so that the choice never depends on map
// order); "" when there is none.
func biggestContainer(byContainer map[string]int64) (string, int64) {
	var id string
	var mem int64
	for c, m := range byContainer {
		if id == "" || replaces(c, m, id, mem) {
			id, mem = c, m
		}
	}
	return id, mem
}

// replaces tells whether container id, holding mem, takes the place of
// cur, holding curMem, as the one a user's minute names: none yet, more
// memory, or as much and a smaller id.
func replaces(id string, mem int64, cur string, curMem int64) bool {
	return cur == "" || mem > curMem || mem == curMem && id < cur
}

// record finishes the accumulator. MIG minutes (no valid utilisation sample)
// carry null utilisation.
func (acc *minuteAcc) record() wire.UsageRecord {
	r := acc.rec
	if acc.utilCount > 0 {
		avg := round2(acc.utilSum / float64(acc.utilCount))
		mx := acc.utilMax
		r.UtilAvgPct, r.UtilMaxPct = &avg, &mx
	}
	r.Users = make([]wire.UserUsage, 0, len(acc.users))
	for _, u := range acc.users {
		r.Users = append(r.Users, *u)
	}
	sort.Slice(r.Users, func(i, j int) bool { return r.Users[i].User < r.Users[j].User })
	return r
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

func sortRecords(rs []wire.UsageRecord) []wire.UsageRecord {
	sort.Slice(rs, func(i, j int) bool {
		if !rs[i].Minute.Equal(rs[j].Minute) {
			return rs[i].Minute.Before(rs[j].Minute)
		}
		return rs[i].GPUUUID < rs[j].GPUUUID
	})
	return rs
}
