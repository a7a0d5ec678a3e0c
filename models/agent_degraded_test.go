package models

import (
	"testing"
	"time"
)

func TestAgentNodeDegradedAndStale(t *testing.T) {
	seen := ap0.Add(-30 * time.Second)
	old := ap0.Add(-NodeOfflineAfter)
	since := ap0.Add(-2 * time.Minute)
	tests := []struct {
		name          string
		node          AgentNode
		wantDegraded  bool
		wantStale     bool
		wantOffline   bool
		wantLockAlert bool
	}{
		{"healthy", AgentNode{Enrolled: true, LastSeenAt: &seen}, false, false, false, false},
		{"samples failing", AgentNode{Enrolled: true, LastSeenAt: &seen, SampleError: "nvml: Unknown Error", SampleFailingSince: &since}, true, true, false, false},
		{"NVML down", AgentNode{Enrolled: true, LastSeenAt: &seen, NVMLDownSince: &since}, true, true, false, false},
		{"offline", AgentNode{Enrolled: true, LastSeenAt: &old}, false, true, true, false},
		{"offline and failing", AgentNode{Enrolled: true, LastSeenAt: &old, SampleFailingSince: &since}, true, true, true, false},
		{"never seen", AgentNode{}, false, true, true, false},
		{"cannot lock is no degradation", AgentNode{Enrolled: true, LastSeenAt: &seen, Lock: "detect (cannot lock: read-only file system)"}, false, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.node
			if got := n.Degraded(); got != tt.wantDegraded {
				t.Errorf("Degraded = %v, want %v", got, tt.wantDegraded)
			}
			if got := n.FiguresStale(ap0); got != tt.wantStale {
				t.Errorf("FiguresStale = %v, want %v", got, tt.wantStale)
			}
			if got := n.Offline(ap0); got != tt.wantOffline {
				t.Errorf("Offline = %v, want %v", got, tt.wantOffline)
			}
			if got := n.LockFailed(); got != tt.wantLockAlert {
				t.Errorf("LockFailed = %v, want %v", got, tt.wantLockAlert)
			}
			st := BuildLiveStatus(LiveInputs{Nodes: []AgentNode{n}}, ap0)
			if len(st) != 1 || st[0].Stale != tt.wantStale || st[0].Offline != tt.wantOffline {
				t.Errorf("live status = %+v, want stale %v offline %v", st, tt.wantStale, tt.wantOffline)
			}
		})
	}
}
