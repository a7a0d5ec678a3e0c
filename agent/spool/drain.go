package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Sender delivers one entry to the portal.
type Sender func(ctx context.Context, e Entry) error

// Drain delivers entries oldest first until the spool is empty or a send
// fails. A failure stops the drain so that order is kept; the next drain
// retries the same entry. An error for which permanent returns true (the
// portal rejected the body itself, a 4xx) sets the entry aside as .rejected
// instead, since resending it would block every later entry forever.
func (s *Spool) Drain(ctx context.Context, send Sender, permanent func(error) bool) (int, error) {
	delivered := 0
	for {
		if err := ctx.Err(); err != nil {
			return delivered, fmt.Errorf("agent: spool: %w", err)
		}
		e, err := s.Oldest()
		if errors.Is(err, ErrEmpty) {
			return delivered, nil
		}
		if err != nil {
			return delivered, err
		}
		if err := send(ctx, e); err != nil {
			if permanent == nil || !permanent(err) {
				return delivered, fmt.Errorf("agent: spool: deliver %d: %w", e.Seq, err)
			}
			s.log.Error("agent: spool: portal rejected entry, set aside", "seq", e.Seq, "kind", e.Kind, "err", err)
			s.reject(e.Seq)
			continue
		}
		if err := s.Ack(e.Seq); err != nil {
			return delivered, err
		}
		delivered++
	}
}

// reject sets seq aside as .rejected. If the rename fails the entry is
// still dropped from this run's queue (so later entries flow) and is sent,
// and rejected, once more after a restart; the failure is logged.
func (s *Spool) reject(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.Rename(s.path(seq), s.path(seq)+".rejected"); err != nil {
		s.log.Error("agent: spool: set aside rejected entry", "seq", seq, "err", err)
	}
	s.forget(seq)
}
