package spool

import (
	"os"
	"time"
)

// Stats is what status and metrics show about the spool.
type Stats struct {
	Depth  int
	Bytes  int64
	Oldest time.Time
}

// Stats returns the current depth, size and oldest entry time.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Depth: len(s.files)}
	for _, f := range s.files {
		st.Bytes += f.size
	}
	if len(s.files) > 0 {
		st.Oldest = s.files[0].at
	}
	return st
}

// Prune drops entries over the limits; Append calls it too.
func (s *Spool) Prune() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked()
}

func (s *Spool) pruneLocked() {
	var total int64
	for _, f := range s.files {
		total += f.size
	}
	cutoff := s.now().Add(-s.lim.MaxAge)
	for len(s.files) > 1 { // never drop the entry just written
		f := s.files[0]
		tooOld := s.lim.MaxAge > 0 && f.at.Before(cutoff)
		tooBig := s.lim.MaxBytes > 0 && total > s.lim.MaxBytes
		if !tooOld && !tooBig {
			return
		}
		s.log.Error("agent: spool: dropping undelivered entry over the limits", "seq", f.seq, "age", s.now().Sub(f.at).String(), "bytes", total)
		_ = os.Remove(s.path(f.seq))
		total -= f.size
		s.files = s.files[1:]
	}
}
