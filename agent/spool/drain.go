package spool

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"
)

// Sender delivers one entry to the portal.
type Sender func(ctx context.Context, e Entry) error

// Drain delivers entries oldest first until the spool is empty, a send
// fails, or the next entry is one that wait holds back for now (nil holds
// none). A failure or a held entry stops the drain so that order is kept;
// the next drain starts from the same entry. Only an error for which
// invalid returns true (the portal said the body itself is invalid) sets
// the entry aside as .rejected, since resending it would block every
// later entry forever.
// Anything else (refused credential, unknown node, maintenance, outage)
// waits: those pass, and the data is good.
func (s *Spool) Drain(ctx context.Context, send Sender, invalid func(error) bool, wait func(Entry) bool) (int, error) {
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
		if wait != nil && wait(e) {
			return delivered, nil
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

// Slot is node's own moment in [0, spread): how long after a minute ends
// its agent sends that minute's usage (UsageWaits). Every node closes a
// minute at the same second of the clock; sent at once, a fleet's usage
// batches came in the first 25 s of each minute (a sample and a delivery
// interval), several times the portal's mean rate. The slot is a hash of
// the node's name, so it stays put across restarts and spreads the nodes
// evenly; 0 when spread is not positive.
func Slot(node string, spread time.Duration) time.Duration {
	if spread <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(node))
	return time.Duration(h.Sum64() % uint64(spread))
}

// UsageWaits reports whether a usage entry made at created waits at now
// for its node's slot: until slot past the start of the minute it was
// made in (the minute after the one it reports). A backlog made in earlier
// minutes is due at once.
func UsageWaits(created, now time.Time, slot time.Duration) bool {
	return now.Before(created.Truncate(time.Minute).Add(slot))
}
