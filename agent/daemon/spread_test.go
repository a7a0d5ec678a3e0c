package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/spool"
)

// TestUsageWaitsForTheNodesSlot: with a spread, a closed minute is not
// sent at the next delivery but at the node's own moment after it
// (spool.Slot), and the last delivery at stop sends it whatever the time.
func TestUsageWaitsForTheNodesSlot(t *testing.T) {
	r := newRig(t)
	r.spread = 45 * time.Second
	slot := spool.Slot("n1", r.spread)
	if slot < 20*time.Second {
		t.Fatalf("node n1's slot is %s: this test needs one of 20 s or more", slot)
	}
	d := r.start()
	r.run(d, time.Minute+10*time.Second) // samples 14:00:00 … 14:01:00: minute 14:00 closes at 14:01:00
	stored := func() int {
		r.portal.mu.Lock()
		defer r.portal.mu.Unlock()
		return len(r.portal.records)
	}
	if got := stored(); got != 0 {
		t.Fatalf("before the slot, at %s: %d records stored, want 0", r.now.Format(time.TimeOnly), got)
	}
	r.now = t0.Add(time.Minute + slot - time.Second)
	if err := d.DeliverOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := stored(); got != 0 {
		t.Fatalf("a second before the slot: %d records stored, want 0", got)
	}
	r.now = t0.Add(time.Minute + slot)
	if err := d.DeliverOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.checkExactlyOnce(t0, t0.Add(time.Minute))

	// The next minute closes; the agent stops before its slot, and its
	// last delivery sends it (and the partial minute is saved, not sent).
	r.now = t0.Add(2 * time.Minute)
	if err := d.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := d.DeliverOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := stored(); got != 8 {
		t.Fatalf("minute 14:01 before its slot: %d records stored, want 8 (minute 14:00)", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Run stops at once (the rig's tickers are an hour)
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	r.checkExactlyOnce(t0, t0.Add(2*time.Minute))
	if st := d.CurrentStatus(); st.SpoolDepth != 0 {
		t.Errorf("spool depth after the stop = %d, want 0", st.SpoolDepth)
	}
}
