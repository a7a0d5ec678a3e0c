package detect_test

import (
	"context"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

type sent struct {
	pid int
	sig syscall.Signal
}

// recorder observes signals and terminal messages instead of sending them.
type recorder struct {
	mu      sync.Mutex
	signals []sent
	notes   map[string][]string
}

func (r *recorder) Signal(pid int, sig syscall.Signal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.signals = append(r.signals, sent{pid, sig})
	return nil
}

func (r *recorder) Notify(uid int, user, msg string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes[user] = append(r.notes[user], msg)
	return nil
}

// scenario runs the real sampler on go-nvml's simulated DGX A100 and a temp
// /proc tree, feeding the detector every 10 s of simulated time.
type scenario struct {
	t        *testing.T
	node     *agenttest.Node
	procs    *agenttest.Procs
	s        *sampler.Sampler
	det      *detect.Detector
	rec      *recorder
	now      time.Time
	bookings []wire.Booking
	viol     []wire.Violation
	idle     []wire.IdleReport
}

var t0 = time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)

func newScenario(t *testing.T, pol detect.Policy) *scenario {
	t.Helper()
	node := agenttest.NewNode(t)
	procs := agenttest.NewProcs(t)
	b, err := nvmlgpu.Open(node.Server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	devs, _ := b.Devices(context.Background())
	res := procfs.New(procs.Root, procs.Passwd, procs.Group)
	rec := &recorder{notes: map[string][]string{}}
	return &scenario{t: t, node: node, procs: procs, rec: rec, now: t0,
		s: sampler.New(b, res, devs, nil), det: detect.New("n1", pol, rec, rec, res, nil)}
}

// rebuild points the sampler and a fresh detector at sc's node and procs,
// as a restarted agent would.
func (sc *scenario) rebuild(t *testing.T) {
	t.Helper()
	b, err := nvmlgpu.Open(sc.node.Server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	devs, _ := b.Devices(context.Background())
	res := procfs.New(sc.procs.Root, sc.procs.Passwd, sc.procs.Group)
	sc.s, sc.det = sampler.New(b, res, devs, nil), detect.New("n1", enforcing(), sc.rec, sc.rec, res, nil)
}

// run advances simulated time by d in 10 s samples.
func (sc *scenario) run(d time.Duration) {
	sc.t.Helper()
	for end := sc.now.Add(d); sc.now.Before(end); sc.now = sc.now.Add(10 * time.Second) {
		snap, err := sc.s.Sample(context.Background(), sc.now)
		if err != nil {
			sc.t.Fatal(err)
		}
		ev := sc.det.Observe(snap, sc.bookings)
		sc.viol = append(sc.viol, ev.Violations...)
		sc.idle = append(sc.idle, ev.Idle...)
	}
}

func (sc *scenario) booking(id int64, user string, gpus []int, from, to time.Duration) {
	b := wire.Booking{ID: id, User: user, StartsAt: t0.Add(from), EndsAt: t0.Add(to), Kind: wire.KindStandard}
	for _, i := range gpus {
		b.GPUUUIDs = append(b.GPUUUIDs, sc.node.UUID(i))
	}
	sc.bookings = append(sc.bookings, b)
}

func actions(vs []wire.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Kind+"/"+v.Action)
	}
	return out
}

func enforcing() detect.Policy {
	p := detect.DefaultPolicy()
	p.Enforce = true
	return p
}

func TestUnbookedUseEscalates(t *testing.T) {
	sc := newScenario(t, enforcing())
	sc.procs.Add(t, 200, agenttest.UIDBob)
	sc.node.Set(4, agenttest.GPUState{Util: 90, UsedMiB: 5000, Procs: []agenttest.Proc{{PID: 200, MemMiB: 5000}}})
	sc.run(6 * time.Minute)
	want := []string{"unbooked_use/warned", "unbooked_use/sigterm", "unbooked_use/sigkill"}
	if got := actions(sc.viol); !slices.Equal(got, want) {
		t.Fatalf("violations = %v, want %v", got, want)
	}
	v := sc.viol[0]
	if v.GPUUUID != sc.node.UUID(4) || v.User != "bob" || v.UID != agenttest.UIDBob || v.PID != 200 || v.MemoryMiB != 5000 || !v.FirstSeen.Equal(t0) {
		t.Errorf("violation = %+v", v)
	}
	if sc.viol[1].ID != v.ID || sc.viol[2].ID != v.ID {
		t.Errorf("IDs changed across escalation: %q %q %q", v.ID, sc.viol[1].ID, sc.viol[2].ID)
	}
	if got, want := sc.viol[1].LastSeen, t0.Add(5*time.Minute); !got.Equal(want) {
		t.Errorf("SIGTERM at %v, want %v (after the 5 min grace)", got, want)
	}
	if got, want := sc.rec.signals, []sent{{200, syscall.SIGTERM}, {200, syscall.SIGKILL}}; !slices.Equal(got, want) {
		t.Errorf("signals = %v, want %v", got, want)
	}
	if got := len(sc.rec.notes["bob"]); got != 1 {
		t.Errorf("bob got %d messages, want 1", got)
	}
	sc.node.Set(4, agenttest.GPUState{})
	sc.procs.Remove(t, 200)
	sc.run(10 * time.Second)
	if got, want := actions(sc.viol[3:]), []string{"unbooked_use/sigkill"}; !slices.Equal(got, want) {
		t.Errorf("after exit = %v, want the final update %v", got, want)
	}
	for _, v := range sc.viol {
		b := wire.ViolationBatch{Node: "n1", Violations: []wire.Violation{v}}
		if err := b.Validate(); err != nil {
			t.Errorf("violation does not validate: %v", err)
		}
	}
}

func TestWarnOnlyNeverSignals(t *testing.T) {
	sc := newScenario(t, detect.DefaultPolicy())
	sc.procs.Add(t, 200, agenttest.UIDBob)
	sc.node.Set(4, agenttest.GPUState{Util: 90, UsedMiB: 5000, Procs: []agenttest.Proc{{PID: 200, MemMiB: 5000}}})
	sc.run(time.Hour)
	if got, want := actions(sc.viol), []string{"unbooked_use/warned"}; !slices.Equal(got, want) {
		t.Errorf("violations = %v, want %v", got, want)
	}
	if len(sc.rec.signals) != 0 {
		t.Errorf("signals = %v, want none", sc.rec.signals)
	}
}

func TestSignalSkippedWhenPIDChangedOwner(t *testing.T) {
	sc := newScenario(t, enforcing())
	sc.procs.Add(t, 200, agenttest.UIDBob)
	sc.node.Set(4, agenttest.GPUState{Util: 90, Procs: []agenttest.Proc{{PID: 200}}})
	sc.run(4 * time.Minute)
	// bob's process exits and the PID is reused by alice just before the grace ends
	sc.procs.Remove(t, 200)
	sc.procs.Add(t, 200, agenttest.UIDAlice)
	sc.booking(1, "alice", []int{4}, 0, time.Hour)
	sc.run(2 * time.Minute)
	if len(sc.rec.signals) != 0 {
		t.Errorf("signals = %v, want none", sc.rec.signals)
	}
}

func TestExemptUsers(t *testing.T) {
	pol := enforcing()
	pol.Exempt.Groups = []string{"gpuadmins"}
	sc := newScenario(t, pol)
	sc.procs.Add(t, 1, agenttest.UIDRoot)
	sc.procs.Add(t, 2, agenttest.UIDGdm)
	sc.procs.Add(t, 3, agenttest.UIDCarol)
	sc.node.Set(0, agenttest.GPUState{UsedMiB: 300, Procs: []agenttest.Proc{{PID: 1, MemMiB: 100}, {PID: 2, MemMiB: 100}, {PID: 3, MemMiB: 100}}})
	sc.run(10 * time.Minute)
	if len(sc.viol) != 0 || len(sc.rec.signals) != 0 {
		t.Errorf("violations = %v, signals = %v; want none", actions(sc.viol), sc.rec.signals)
	}
}
