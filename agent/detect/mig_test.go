package detect_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/nvmlgpu/migmock"
	"github.com/gpubook/gpubook/models/wire"
)

// TestMIGInstanceAttribution: on GPU 3 split into two 1g.5gb instances,
// alice's process on the instance she booked is fine; bob's on the other
// instance is unbooked use of that instance (the violation and his message
// name it), even though alice's booking is on the same GPU; carol's
// booking of the parent GPU covers any instance of it; an idle booked
// instance is reported by its UUID.
func TestMIGInstanceAttribution(t *testing.T) {
	sc := newScenario(t, enforcing())
	sc.procs.Add(t, 100, agenttest.UIDAlice)
	sc.procs.Add(t, 200, agenttest.UIDBob)
	sc.procs.Add(t, 300, agenttest.UIDCarol)
	in := func(uuid string, gi int, procs ...agenttest.Proc) agenttest.MIG {
		var used int64
		for _, p := range procs {
			used += p.MemMiB
		}
		return agenttest.MIG{Instance: migmock.Instance{UUID: uuid, GI: gi, Profile: "1g.5gb", Slices: 1, MemoryMiB: 4864}, UsedMiB: used, Procs: procs}
	}
	a, b := in("MIG-a", 7, agenttest.Proc{PID: 100, MemMiB: 1000}), in("MIG-b", 8, agenttest.Proc{PID: 200, MemMiB: 2000})
	c, idle := in("MIG-c", 9, agenttest.Proc{PID: 300, MemMiB: 500}), in("MIG-d", 10)
	sc.node.Set(3, agenttest.GPUState{MIG: true, Procs: []agenttest.Proc{{PID: 100}, {PID: 200}, {PID: 300}}, Instances: []agenttest.MIG{a, b, c, idle}})
	sc.bookings = []wire.Booking{
		{ID: 1, User: "alice", GPUUUIDs: []string{"MIG-a"}, StartsAt: t0, EndsAt: t0.Add(2 * time.Hour)},
		{ID: 2, User: "alice", GPUUUIDs: []string{"MIG-d"}, StartsAt: t0, EndsAt: t0.Add(2 * time.Hour)},
		{ID: 3, User: "carol", GPUUUIDs: []string{sc.node.UUID(3)}, StartsAt: t0, EndsAt: t0.Add(2 * time.Hour)},
	}
	sc.run(31 * time.Minute)
	if got, want := actions(sc.viol), []string{"unbooked_use/warned", "unbooked_use/sigterm", "unbooked_use/sigkill"}; !slices.Equal(got, want) {
		t.Fatalf("violations = %v, want %v", got, want)
	}
	if v := sc.viol[0]; v.GPUUUID != "MIG-b" || v.User != "bob" || v.PID != 200 || v.MemoryMiB != 2000 {
		t.Errorf("violation = %+v, want bob's use of MIG-b", v)
	}
	if notes := sc.rec.notes["bob"]; len(notes) != 1 || !strings.Contains(notes[0], "runs on GPU 3 1g.5gb,") {
		t.Errorf("bob's messages = %q, want one naming GPU 3 1g.5gb", notes)
	}
	if len(sc.rec.notes["alice"]) != 0 || len(sc.rec.notes["carol"]) != 0 {
		t.Errorf("alice and carol were told %q, %q; want nothing", sc.rec.notes["alice"], sc.rec.notes["carol"])
	}
	if len(sc.idle) != 1 || sc.idle[0].BookingID != 2 || !slices.Equal(sc.idle[0].GPUUUIDs, []string{"MIG-d"}) {
		t.Errorf("idle reports = %+v, want booking 2's MIG-d", sc.idle)
	}
	for _, v := range sc.viol {
		if err := (&wire.ViolationBatch{Node: "n1", Violations: []wire.Violation{v}}).Validate(); err != nil {
			t.Errorf("violation does not validate: %v", err)
		}
	}
}
