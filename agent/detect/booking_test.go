package detect_test

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/detect"
)

func TestOverstayWarnsThenEnforces(t *testing.T) {
	sc := newScenario(t, enforcing())
	sc.booking(7, "alice", []int{2}, 0, 30*time.Minute)
	sc.procs.Add(t, 100, agenttest.UIDAlice)
	sc.node.Set(2, agenttest.GPUState{Util: 70, UsedMiB: 9000, Procs: []agenttest.Proc{{PID: 100, MemMiB: 9000}}})
	sc.run(19 * time.Minute)
	if len(sc.viol) != 0 || len(sc.rec.notes["alice"]) != 0 {
		t.Fatalf("before the warning window: violations %v, notes %v", actions(sc.viol), sc.rec.notes["alice"])
	}
	sc.run(2 * time.Minute) // 14:19 … 14:21: inside the 10 min before the end
	if got := sc.rec.notes["alice"]; len(got) != 1 || !strings.Contains(got[0], "ends at") {
		t.Fatalf("notes = %q, want one end-of-booking warning", got)
	}
	sc.run(15 * time.Minute) // past the end (14:30) + 5 min grace + 30 s
	want := []string{"overstay/warned", "overstay/sigterm", "overstay/sigkill"}
	if got := actions(sc.viol); !slices.Equal(got, want) {
		t.Fatalf("violations = %v, want %v", got, want)
	}
	if v := sc.viol[0]; v.BookingID != 7 || v.User != "alice" || !v.FirstSeen.Equal(t0.Add(30*time.Minute)) {
		t.Errorf("violation = %+v", v)
	}
	if got, want := sc.viol[1].LastSeen, t0.Add(35*time.Minute); !got.Equal(want) {
		t.Errorf("SIGTERM at %v, want %v (end + grace)", got, want)
	}
	if got, want := sc.rec.signals, []sent{{100, syscall.SIGTERM}, {100, syscall.SIGKILL}}; !slices.Equal(got, want) {
		t.Errorf("signals = %v, want %v", got, want)
	}
}

func TestBackToBackBookingIsNoOverstay(t *testing.T) {
	sc := newScenario(t, enforcing())
	sc.booking(7, "alice", []int{2}, 0, 30*time.Minute)
	sc.booking(8, "alice", []int{2}, 30*time.Minute, 2*time.Hour)
	sc.procs.Add(t, 100, agenttest.UIDAlice)
	sc.node.Set(2, agenttest.GPUState{Util: 70, Procs: []agenttest.Proc{{PID: 100, MemMiB: 9000}}})
	sc.run(time.Hour)
	if len(sc.viol) != 0 || len(sc.rec.notes["alice"]) != 0 || len(sc.rec.signals) != 0 {
		t.Errorf("violations %v, notes %v, signals %v; want none", actions(sc.viol), sc.rec.notes["alice"], sc.rec.signals)
	}
}

func TestMemoryWithoutProcess(t *testing.T) {
	sc := newScenario(t, detect.DefaultPolicy())
	sc.node.Set(5, agenttest.GPUState{UsedMiB: 5000}) // memory held, no process listed
	sc.node.Set(6, agenttest.GPUState{UsedMiB: 500})  // below the threshold: driver overhead
	sc.run(4*time.Minute + 50*time.Second)
	if len(sc.viol) != 0 {
		t.Fatalf("violations before 5 min = %v", actions(sc.viol))
	}
	sc.run(20 * time.Minute)
	if got, want := actions(sc.viol), []string{"memory_without_process/none"}; !slices.Equal(got, want) {
		t.Fatalf("violations = %v, want %v", got, want)
	}
	if v := sc.viol[0]; v.GPUUUID != sc.node.UUID(5) || v.MemoryMiB != 5000 || !v.FirstSeen.Equal(t0) {
		t.Errorf("violation = %+v", v)
	}
	sc.node.Set(5, agenttest.GPUState{})
	sc.run(10 * time.Second)
	if got := len(sc.viol); got != 2 {
		t.Errorf("violations after release = %d, want 2 (final update)", got)
	}
}

func TestIdleBooking(t *testing.T) {
	sc := newScenario(t, detect.DefaultPolicy())
	sc.booking(9, "alice", []int{0, 1}, 0, 4*time.Hour)
	sc.procs.Add(t, 100, agenttest.UIDAlice)
	sc.node.Set(0, agenttest.GPUState{Util: 2, UsedMiB: 400})
	sc.node.Set(1, agenttest.GPUState{Util: 60, UsedMiB: 9000, Procs: []agenttest.Proc{{PID: 100, MemMiB: 9000}}})
	sc.run(29*time.Minute + 50*time.Second)
	if len(sc.idle) != 0 {
		t.Fatalf("idle reports before 30 min = %+v", sc.idle)
	}
	sc.run(20 * time.Minute)
	if len(sc.idle) != 1 {
		t.Fatalf("idle reports = %d, want 1", len(sc.idle))
	}
	r := sc.idle[0]
	if r.BookingID != 9 || r.User != "alice" || !slices.Equal(r.GPUUUIDs, []string{sc.node.UUID(0)}) ||
		!r.IdleSince.Equal(t0) || !r.ReportedAt.Equal(t0.Add(30*time.Minute)) {
		t.Errorf("report = %+v", r)
	}
	// GPU 1 goes idle too: after 30 more minutes the report grows.
	sc.node.Set(1, agenttest.GPUState{Util: 0})
	sc.procs.Remove(t, 100)
	sc.run(31 * time.Minute)
	if len(sc.idle) != 2 || len(sc.idle[1].GPUUUIDs) != 2 || sc.idle[1].ID != r.ID {
		t.Errorf("idle reports = %+v, want a second one with both GPUs and the same ID", sc.idle)
	}
}

func TestMIGBookingIdleOnlyWithoutProcess(t *testing.T) {
	sc := newScenario(t, detect.DefaultPolicy())
	sc.booking(9, "alice", []int{3}, 0, 4*time.Hour)
	sc.procs.Add(t, 100, agenttest.UIDAlice)
	sc.node.Set(3, agenttest.GPUState{MIG: true, UsedMiB: 2000, Procs: []agenttest.Proc{{PID: 100, MemMiB: 2000}}})
	sc.run(time.Hour)
	if len(sc.idle) != 0 {
		t.Errorf("idle reports = %+v, want none while a process runs on the MIG GPU", sc.idle)
	}
}
