package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gpubook/gpubook/agent/atomicfile"
)

// stateFile holds what must outlive the entries: the next sequence number
// (batch IDs stay unique when the spool empties and the agent restarts),
// the drop counters and the newest set-aside reason.
const stateFile = "state.json"

type state struct {
	NextSeq        uint64           `json:"next_seq"`
	Dropped        map[string]int64 `json:"dropped,omitempty"` // by Tag
	SetAsideReason string           `json:"set_aside_reason,omitempty"`
	SetAsideAt     time.Time        `json:"set_aside_at,omitzero"`
}

func (s *Spool) loadState() error {
	found, err := atomicfile.ReadJSON(filepath.Join(s.dir, stateFile), &s.st)
	switch {
	case err != nil && !errors.Is(err, atomicfile.ErrDamaged):
		return fmt.Errorf("agent: spool: state: %w", err)
	case !found:
		s.st = state{NextSeq: 1}
		return nil
	case err != nil:
		// Damaged: restart the counters rather than refuse to run. The
		// sequence number is corrected from the entries present and from
		// the clock, so batch IDs still do not repeat.
		s.log.Error("agent: spool: damaged state file, counters restart", "err", err)
		s.st = state{NextSeq: uint64(s.now().UnixMilli())}
	}
	return nil
}

// saveState writes the state durably; s.mu must be held.
func (s *Spool) saveState() error {
	if err := atomicfile.WriteJSON(filepath.Join(s.dir, stateFile), s.st, 0o600); err != nil {
		return fmt.Errorf("agent: spool: state: %w", err)
	}
	return nil
}

// Stats is what status, metrics and the heartbeat show about the spool.
type Stats struct {
	Depth  int
	Bytes  int64
	Oldest time.Time
	// Dropped counts entries dropped over the limits since the spool was
	// created, by Tag ("usage", "violations", "idle").
	Dropped map[string]int64
	// SetAside is the number of entries set aside (rejected by the portal as
	// invalid, or unreadable) still on disk; SetAsideReason is the newest's.
	SetAside       int
	SetAsideReason string
	SetAsideAt     time.Time
}

// DroppedTotal sums Dropped.
func (st Stats) DroppedTotal() int64 {
	var n int64
	for _, v := range st.Dropped {
		n += v
	}
	return n
}

// Stats returns the current depth, size, oldest entry time and counters.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Depth: len(s.files), Dropped: map[string]int64{}, SetAside: s.setAside,
		SetAsideReason: s.st.SetAsideReason, SetAsideAt: s.st.SetAsideAt}
	for _, f := range s.files {
		st.Bytes += f.size
	}
	if len(s.files) > 0 {
		st.Oldest = s.files[0].at
	}
	for k, v := range s.st.Dropped {
		st.Dropped[k] = v
	}
	return st
}

// Prune drops entries over the limits; Append calls it too.
func (s *Spool) Prune() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked()
}

// usageTag is the kind dropped first when the spool is over its size: a
// lost minute of usage is a gap in a chart, a lost violation is an
// incident nobody hears of.
const usageTag = "usage"

func (s *Spool) pruneLocked() {
	var total int64
	for _, f := range s.files {
		total += f.size
	}
	cutoff := s.now().Add(-s.lim.MaxAge)
	dropped := false
	for len(s.files) > 1 { // never drop the entry just written
		i := -1
		switch {
		case s.lim.MaxAge > 0 && s.files[0].at.Before(cutoff):
			i = 0
		case s.lim.MaxBytes > 0 && total > s.lim.MaxBytes:
			i = s.victim()
		}
		if i < 0 {
			break
		}
		f := s.files[i]
		s.log.Error("agent: spool: dropping undelivered entry over the limits", "seq", f.seq, "kind", f.tag,
			"age", s.now().Sub(f.at).String(), "bytes", total)
		_ = os.Remove(s.path(f))
		total -= f.size
		s.files = slices.Delete(s.files, i, i+1)
		if s.st.Dropped == nil {
			s.st.Dropped = map[string]int64{}
		}
		s.st.Dropped[f.tag]++
		dropped = true
	}
	if dropped {
		if err := s.saveState(); err != nil {
			s.log.Error("agent: spool: save drop counters", "err", err)
		}
	}
}

// victim picks the entry to drop for size: the oldest usage entry, else the
// oldest entry; never the newest (just written).
func (s *Spool) victim() int {
	last := len(s.files) - 1
	if i := slices.IndexFunc(s.files[:last], func(f fileInfo) bool { return f.tag == usageTag }); i >= 0 {
		return i
	}
	return 0
}

// setAsideLocked renames f with ext (".rejected", ".bad"), takes it out of
// the queue and remembers why. If the rename fails the entry is still
// dropped from this run's queue (so later entries flow) and is tried once
// more after a restart; the failure is logged. s.mu must be held.
func (s *Spool) setAsideLocked(f fileInfo, ext, reason string) {
	if err := os.Rename(s.path(f), s.path(f)+ext); err != nil {
		s.log.Error("agent: spool: set aside entry", "seq", f.seq, "err", err)
	} else {
		s.setAside++
	}
	s.files = slices.DeleteFunc(s.files, func(g fileInfo) bool { return g.seq == f.seq })
	s.st.SetAsideReason, s.st.SetAsideAt = clipReason(reason), s.now().UTC()
	if err := s.saveState(); err != nil {
		s.log.Error("agent: spool: save set-aside reason", "err", err)
	}
}

func clipReason(r string) string {
	if len(r) > 300 {
		return r[:300]
	}
	return r
}
