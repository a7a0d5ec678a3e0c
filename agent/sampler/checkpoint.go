package sampler

import (
	"fmt"
	"time"

	"github.com/gpubook/gpubook/agent/atomicfile"
	"github.com/gpubook/gpubook/models/wire"
)

// savedAcc is one GPU's minute in progress as kept across restarts: the
// running sums, so that a restarted agent resumes the minute (or finishes
// it) instead of losing the samples it had.
type savedAcc struct {
	Record    wire.UsageRecord `json:"record"`
	UtilSum   float64          `json:"util_sum"`
	UtilMax   float64          `json:"util_max"`
	UtilCount int              `json:"util_count"`
	Users     []wire.UserUsage `json:"users"`
	// ContainerMem is minuteAcc.containerMem (absent in files of older agents).
	ContainerMem map[string]int64 `json:"container_mem,omitempty"`
}

// Save writes the minute being aggregated to path (atomically, fsynced):
// a crash then costs at most the samples taken since the last Save.
func (a *Aggregator) Save(path string) error {
	out := make([]savedAcc, 0, len(a.accs))
	for _, acc := range a.accs {
		s := savedAcc{Record: acc.rec, UtilSum: acc.utilSum, UtilMax: acc.utilMax, UtilCount: acc.utilCount,
			ContainerMem: acc.containerMem}
		for _, u := range acc.users {
			s.Users = append(s.Users, *u)
		}
		out = append(out, s)
	}
	if err := atomicfile.WriteJSON(path, out, 0o600); err != nil {
		return fmt.Errorf("agent: sampler: save minute: %w", err)
	}
	return nil
}

// Load restores what Save wrote, except minutes not after After (a
// previous run spooled them already: loading them again would send them
// twice). A missing file is nothing to restore; a damaged one is an error
// and restores nothing.
func (a *Aggregator) Load(path string) error {
	var saved []savedAcc
	if _, err := atomicfile.ReadJSON(path, &saved); err != nil {
		return fmt.Errorf("agent: sampler: load minute: %w", err)
	}
	for _, s := range saved {
		s.Record.Minute = s.Record.Minute.UTC()
		if s.Record.GPUUUID == "" || !s.Record.Minute.After(a.After) {
			continue
		}
		acc := &minuteAcc{rec: s.Record, utilSum: s.UtilSum, utilMax: s.UtilMax, utilCount: s.UtilCount,
			users: make(map[string]*wire.UserUsage, len(s.Users)), containerMem: s.ContainerMem}
		if acc.containerMem == nil {
			acc.containerMem = map[string]int64{}
		}
		for _, u := range s.Users {
			acc.users[u.User] = &u
		}
		a.accs[s.Record.GPUUUID] = acc
	}
	return nil
}

// Complete returns the minutes that ended before now's minute and forgets
// them: a restored minute whose process died before the next one began.
func (a *Aggregator) Complete(now time.Time) []wire.UsageRecord {
	minute := now.UTC().Truncate(time.Minute)
	var done []wire.UsageRecord
	for uuid, acc := range a.accs {
		if acc.rec.Minute.Before(minute) {
			done = append(done, a.emit(acc))
			delete(a.accs, uuid)
		}
	}
	return sortRecords(done)
}

// emit is acc's record; After moves up to its minute, so that a snapshot
// that arrives late for an emitted minute (a clock stepped back, a slow
// sample) is dropped instead of opening the minute again and sending its
// key twice.
func (a *Aggregator) emit(acc *minuteAcc) wire.UsageRecord {
	if acc.rec.Minute.After(a.After) {
		a.After = acc.rec.Minute
	}
	return acc.record()
}

// Pending is the latest minute being aggregated; zero when none.
func (a *Aggregator) Pending() time.Time {
	var last time.Time
	for _, acc := range a.accs {
		if acc.rec.Minute.After(last) {
			last = acc.rec.Minute
		}
	}
	return last
}
