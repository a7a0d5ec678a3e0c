package spool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/spool"
)

// TestDrainStopsAtAWaitingEntry: the drain sends entries in order up to
// the first one wait holds back, and leaves it and everything after it
// (whatever its kind) for a later drain: order is kept.
func TestDrainStopsAtAWaitingEntry(t *testing.T) {
	c := &clock{time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)}
	s := open(t, t.TempDir(), spool.DefaultLimits(), c)
	for i, kind := range []string{"/usage", "/violations", "/usage", "/violations"} {
		if _, err := s.Append(kind, i+1); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	send := func(_ context.Context, e spool.Entry) error {
		var n int
		if err := json.Unmarshal(e.Body, &n); err != nil {
			return err
		}
		got = append(got, n)
		return nil
	}
	n, err := s.Drain(context.Background(), send, nil, func(e spool.Entry) bool { return e.Seq == 3 })
	if err != nil || n != 2 || !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("drain holding entry 3: sent %v (%d), err %v; want [1 2]", got, n, err)
	}
	if n, err := s.Drain(context.Background(), send, nil, nil); err != nil || n != 2 || !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Fatalf("next drain: sent %v (%d), err %v; want [1 2 3 4]", got, n, err)
	}
}

// TestUsageWaits: a minute's usage, spooled at the sample that closed it
// (in the next minute), waits until the node's slot into that next minute;
// one spooled in an earlier minute (a backlog) does not wait.
func TestUsageWaits(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.TimeOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tt := range []struct {
		created, now string
		slot         time.Duration
		want         bool
	}{
		{"14:01:07", "14:01:07", 30 * time.Second, true},
		{"14:01:07", "14:01:29", 30 * time.Second, true},
		{"14:01:07", "14:01:30", 30 * time.Second, false},
		{"14:01:07", "14:01:07", 5 * time.Second, false}, // the slot passed before the minute closed
		{"14:01:07", "14:01:07", 0, false},
		{"13:58:40", "14:01:07", 44 * time.Second, false}, // a backlog goes at once
	} {
		if got := spool.UsageWaits(at(tt.created), at(tt.now), tt.slot); got != tt.want {
			t.Errorf("made %s, at %s, slot %s: waits = %v, want %v", tt.created, tt.now, tt.slot, got, tt.want)
		}
	}
}

// TestSlotSpreadsNodes: a node's slot is its own, the same on every call,
// within the spread, and a thousand nodes fill every 5-second part of it
// about evenly (111 each on average).
func TestSlotSpreadsNodes(t *testing.T) {
	const spread = 45 * time.Second
	if got := spool.Slot("gpu-01", 0); got != 0 {
		t.Errorf("no spread: slot %s, want 0", got)
	}
	if spool.Slot("gpu-01", spread) != spool.Slot("gpu-01", spread) {
		t.Error("a node's slot moved between calls")
	}
	parts := make([]int, 9)
	for i := range 1000 {
		s := spool.Slot(fmt.Sprintf("gpu-%04d", i), spread)
		if s < 0 || s >= spread {
			t.Fatalf("node %d: slot %s outside [0, %s)", i, s, spread)
		}
		parts[s/(5*time.Second)]++
	}
	for i, n := range parts {
		if n < 70 || n > 160 {
			t.Errorf("slots %d–%d s: %d nodes of 1,000, want 70–160 (all: %v)", 5*i, 5*i+5, n, parts)
		}
	}
}
