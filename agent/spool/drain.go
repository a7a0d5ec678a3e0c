package spool

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Sender delivers one entry to the portal.
type Sender func(ctx context.Context, e Entry) error

// Drain delivers entries oldest first until the spool is empty or a send
// fails. A failure stops the drain so that order is kept; the next drain
// retries the same entry. Only an error for which invalid returns true (the
// portal said the body itself is invalid) sets the entry aside as
// .rejected, since resending it would block every later entry forever.
// Anything else (refused credential, unknown node, maintenance, outage)
// waits: those pass, and the data is good.
func (s *Spool) Drain(ctx context.Context, send Sender, invalid func(error) bool) (int, error) {
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
			if invalid == nil || !invalid(err) {
				return delivered, fmt.Errorf("agent: spool: deliver %d: %w", e.Seq, err)
			}
			s.log.Error("agent: spool: portal rejected entry as invalid, set aside", "seq", e.Seq, "kind", e.Kind, "err", err)
			s.reject(e.Seq, err.Error())
			continue
		}
		if err := s.Ack(e.Seq); err != nil {
			return delivered, err
		}
		delivered++
	}
}

// reject sets seq aside as .rejected with the portal's reason.
func (s *Spool) reject(seq uint64, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.files, func(f fileInfo) bool { return f.seq == seq }); i >= 0 {
		s.setAsideLocked(s.files[i], ".rejected", reason)
	}
}
