package detect_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/procfs"
)

// TestFirstActionSaysWhatWasSent: with a notifier (enforce = detect or
// signal) a new violation says "warned"; without one (enforce = off, no
// terminal message) it says "none", reported only, and never claims a
// warning; with signals but no notifier the escalation still happens.
func TestFirstActionSaysWhatWasSent(t *testing.T) {
	tests := []struct {
		name     string
		pol      detect.Policy
		notifier bool
		want     []string
		notes    int
	}{
		{"detect: warned", detect.DefaultPolicy(), true, []string{"unbooked_use/warned"}, 1},
		{"off: reported only", detect.DefaultPolicy(), false, []string{"unbooked_use/none"}, 0},
		{"signal without a notifier", enforcing(), false, []string{"unbooked_use/none", "unbooked_use/sigterm", "unbooked_use/sigkill"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := newScenario(t, tt.pol)
			if !tt.notifier {
				res := procfs.New(sc.procs.Root, sc.procs.Passwd, sc.procs.Group)
				sc.det = detect.New("n1", tt.pol, sc.rec, nil, res, nil)
			}
			sc.procs.Add(t, 200, agenttest.UIDBob)
			sc.node.Set(4, agenttest.GPUState{Util: 90, UsedMiB: 5000, Procs: []agenttest.Proc{{PID: 200, MemMiB: 5000}}})
			sc.run(10 * time.Minute)
			if got := actions(sc.viol); !slices.Equal(got, tt.want) {
				t.Errorf("violations = %v, want %v", got, tt.want)
			}
			if got := len(sc.rec.notes["bob"]); got != tt.notes {
				t.Errorf("bob got %d messages, want %d", got, tt.notes)
			}
		})
	}
}
