package daemon_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// TestCrashAroundMinuteBoundary: the daemon is killed (abandoned without
// Stop) right after a sample at points around a minute boundary and
// restarted on the same state directory. Every minute reaches the portal
// exactly once with every sample taken; minutes without a running agent
// are logged as a gap, never sent as if the GPUs were idle.
func TestCrashAroundMinuteBoundary(t *testing.T) {
	tests := []struct {
		name          string
		kill, restart time.Duration // after t0: the last sample, the new process's start
		gap           string        // the gap logged, "" for none
		short         map[int]int   // minute (after t0) → samples when fewer than 6
	}{
		{"last sample of a minute, restart on the boundary", 110 * time.Second, 120 * time.Second, "", nil},
		{"last sample of a minute, restart just after", 110 * time.Second, 125 * time.Second, "", nil},
		{"first sample of a minute, restart in it", 120 * time.Second, 130 * time.Second, "", nil},
		{"mid-minute, restart in the same minute", 90 * time.Second, 100 * time.Second, "", nil},
		{"last sample of a minute, restart minutes later", 110 * time.Second, 250 * time.Second, "from=2026-03-02T14:02:00.000Z to=2026-03-02T14:03:00.000Z minutes=2", map[int]int{4: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			var logs bytes.Buffer
			r.log = slog.New(slog.NewTextHandler(&logs, nil))
			d1 := r.start()
			r.run(d1, tt.kill+10*time.Second) // samples t0 … t0+kill
			r.now = t0.Add(tt.restart)        // d1 is gone: no Stop, no flush
			d2 := r.start()
			r.run(d2, t0.Add(6*time.Minute).Sub(r.now)) // until 14:05:50
			if err := d2.DeliverOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			gapped := map[int]bool{}
			if tt.gap != "" {
				for m := tt.kill/time.Minute + 1; m < tt.restart/time.Minute; m++ {
					gapped[int(m)] = true
				}
			}
			r.checkMinutes(t0, 5, gapped, tt.short)
			gotGap := strings.Contains(logs.String(), "no usage data while the agent was not running")
			if gotGap != (tt.gap != "") || !strings.Contains(logs.String(), tt.gap) {
				t.Errorf("log %q: want gap %q", logs.String(), tt.gap)
			}
		})
	}
}

// checkMinutes asserts, for the n minutes from from, one record per GPU
// received once, 6 samples (or short[m]), and nothing for gapped minutes.
func (r *rig) checkMinutes(from time.Time, n int, gapped map[int]bool, short map[int]int) {
	r.t.Helper()
	p := r.portal
	p.mu.Lock()
	defer p.mu.Unlock()
	for m := range n {
		want := 6
		if s, ok := short[m]; ok {
			want = s
		}
		for i := range 8 {
			k := wire.UsageRecord{GPUUUID: r.node.UUID(i), Minute: from.Add(time.Duration(m) * time.Minute)}.Key("n1")
			rec, ok := p.records[k]
			switch {
			case gapped[m] && ok:
				r.t.Errorf("%s: a record for a minute without agent: %+v", k, rec)
			case gapped[m]:
			case !ok:
				r.t.Errorf("minute lost: %s", k)
			case rec.Samples != want || p.receipts[k] != 1:
				r.t.Errorf("%s: %d samples received %d times, want %d once", k, rec.Samples, p.receipts[k], want)
			}
		}
	}
}
