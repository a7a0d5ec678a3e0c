package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/models/wire"
)

// refusing is a lock that reports the refusals queued for it.
type refusing struct {
	syncs
	next []lock.Refusal
}

func (l *refusing) Refusals(now time.Time) ([]lock.Refusal, error) {
	rs := l.next
	l.next = nil
	for i := range rs {
		rs[i].At = now
	}
	return rs, nil
}

// TestRefusedOpensAsViolations: each user and GPU refused is one violation
// per episode, updated while refusals go on and new after 10 quiet
// minutes; a MIG capability file is its own; a minor the node does not
// list is not sent.
func TestRefusedOpensAsViolations(t *testing.T) {
	r := newRig(t)
	l := &refusing{}
	r.lock, r.lockMode = l, "lock v2"
	d := r.start()
	alice3 := lock.Refusal{User: "alice", UID: 1001, GPUMinor: 3, Count: 2}
	l.next = []lock.Refusal{alice3, {User: "", UID: 4242, GPUMinor: 3, Count: 1},
		{User: "alice", UID: 1001, GPUMinor: 3, MIG: true, Count: 1}, {User: "alice", UID: 1001, GPUMinor: 200, Count: 1}}
	r.run(d, 10*time.Second)
	l.next = []lock.Refusal{alice3}
	r.run(d, 10*time.Second) // refused again: the same episode
	r.run(d, 11*time.Minute) // quiet
	l.next = []lock.Refusal{alice3}
	r.run(d, 10*time.Second) // after the gap: a new episode
	if err := d.DeliverOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	uuid := r.node.UUID(3)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	want := map[string]wire.Violation{
		"n1:refused_open:" + uuid + ":1001:1772460000":     {FirstSeen: at(0), LastSeen: at(10 * time.Second), User: "alice", UID: 1001},
		"n1:refused_open:" + uuid + ":4242:1772460000":     {FirstSeen: at(0), LastSeen: at(0), User: "4242", UID: 4242},
		"n1:refused_open:" + uuid + ":1001:1772460000:mig": {FirstSeen: at(0), LastSeen: at(0), User: "alice", UID: 1001},
		"n1:refused_open:" + uuid + ":1001:1772460680":     {FirstSeen: at(11*time.Minute + 20*time.Second), LastSeen: at(11*time.Minute + 20*time.Second), User: "alice", UID: 1001},
	}
	if len(r.portal.violations) != len(want) {
		t.Errorf("%d violations, want %d: %v", len(r.portal.violations), len(want), r.portal.violations)
	}
	for id, w := range want {
		w.ID, w.Kind, w.GPUUUID, w.Action = id, wire.ViolationRefused, uuid, wire.ActionNone
		if got := r.portal.violations[id]; got != w {
			t.Errorf("violation %s:\n got %+v\nwant %+v", id, got, w)
		}
	}
}
