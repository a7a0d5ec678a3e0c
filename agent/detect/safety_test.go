package detect_test

import (
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/exempt"
)

// TestRootNeverSignalledWhateverTheConfig: with no exemption at all
// (system_uid_max = -1, no users), PID 1 of root on an unbooked GPU is
// neither reported nor signalled.
func TestRootNeverSignalledWhateverTheConfig(t *testing.T) {
	pol := enforcing()
	pol.Exempt = exempt.Rules{SystemUIDMax: -1}
	sc := newScenario(t, pol)
	sc.procs.Add(t, 1, agenttest.UIDRoot)
	sc.procs.Add(t, 2, agenttest.UIDGdm)
	sc.node.Set(0, agenttest.GPUState{UsedMiB: 200, Procs: []agenttest.Proc{{PID: 1, MemMiB: 100}, {PID: 2, MemMiB: 100}}})
	sc.run(10 * time.Minute)
	for _, s := range sc.rec.signals {
		if s.pid == 1 {
			t.Errorf("signals = %v: PID 1 (root) was signalled", sc.rec.signals)
		}
	}
	if !slices.Contains(sc.rec.signals, sent{2, syscall.SIGTERM}) {
		t.Errorf("signals = %v; gdm (UID 120) is not exempt with system_uid_max = -1 and should be stopped", sc.rec.signals)
	}
}

// TestPIDReusedBySameUserNotSignalled: bob's process exits and bob's next
// process gets the same PID; the old episode's grace must not carry over
// to it (start time differs), so no SIGTERM at the old deadline.
func TestPIDReusedBySameUserNotSignalled(t *testing.T) {
	sc := newScenario(t, enforcing())
	sc.procs.AddStarted(t, 200, agenttest.UIDBob, 1, 1000)
	sc.node.Set(4, agenttest.GPUState{Util: 90, Procs: []agenttest.Proc{{PID: 200}}})
	sc.run(4 * time.Minute)
	sc.procs.Remove(t, 200)
	sc.procs.AddStarted(t, 200, agenttest.UIDBob, 1, 5000)
	sc.run(2 * time.Minute) // past the first process's 5 min grace
	if len(sc.rec.signals) != 0 {
		t.Errorf("signals = %v, want none: the new process has its own grace", sc.rec.signals)
	}
	sc.run(4 * time.Minute)
	if !slices.Contains(sc.rec.signals, sent{200, syscall.SIGTERM}) {
		t.Errorf("signals = %v, want SIGTERM once the new process's grace ended", sc.rec.signals)
	}
}

// TestGraceSurvivesRestart: a restarted agent continues the grace period it
// had (saved state), instead of granting a fresh 5 minutes each restart.
func TestGraceSurvivesRestart(t *testing.T) {
	sc := newScenario(t, enforcing())
	state := filepath.Join(t.TempDir(), "violations.json")
	sc.procs.Add(t, 200, agenttest.UIDBob)
	sc.node.Set(4, agenttest.GPUState{Util: 90, Procs: []agenttest.Proc{{PID: 200}}})
	sc.run(4 * time.Minute)
	if err := sc.det.SaveState(state); err != nil {
		t.Fatal(err)
	}
	restarted := newScenario(t, enforcing())
	restarted.node, restarted.procs, restarted.now = sc.node, sc.procs, sc.now
	restarted.rebuild(t)
	if err := restarted.det.LoadState(state); err != nil {
		t.Fatal(err)
	}
	restarted.run(90 * time.Second)
	if !slices.Contains(restarted.rec.signals, sent{200, syscall.SIGTERM}) {
		t.Errorf("signals after restart = %v, want SIGTERM at the original deadline (5 min after first seen)", restarted.rec.signals)
	}
	if got := actions(restarted.viol); len(got) == 0 || got[0] != "unbooked_use/sigterm" {
		t.Errorf("violations after restart = %v, want the episode continued with sigterm", got)
	}
}
