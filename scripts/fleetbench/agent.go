package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// agentVersion is what the simulated agents call themselves.
const agentVersion = "fleetbench"

// entry is one spooled batch, as agent/spool keeps it: the path it goes
// to and its encoded body.
type entry struct {
	path    string
	body    []byte
	records int       // usage records in it
	minute  time.Time // its oldest minute (usage)
	created time.Time // when it was spooled
}

// agent is one simulated node's gpubook-agent: the real sampler,
// aggregator, detector, batching and portal client, paced as the daemon
// (agent/daemon) paces them; the spool, the schedule cache and the
// watermark are kept in memory instead of files.
type agent struct {
	name   string
	portal *client.Client
	src    *source
	smp    *sampler.Sampler
	agg    *sampler.Aggregator
	det    *detect.Detector
	cad    cadence
	now    func() time.Time
	tally  *tally

	mu      sync.Mutex
	sched   wire.Schedule
	etag    string
	synced  chan struct{} // closed at the first schedule sync
	spool   []entry
	seq     uint64
	invSent bool
}

// tally counts the fleet's usage records: made (spooled) and taken by
// the portal.
type tally struct{ made, taken atomic.Int64 }

func newAgent(name string, portal *client.Client, w *workload, cad cadence, now func() time.Time, t *tally) *agent {
	src := newSource(name, w, now)
	o := owners{w: w}
	return &agent{name: name, portal: portal, src: src, cad: cad, now: now, tally: t, synced: make(chan struct{}),
		smp: sampler.New(src, o, src.devices, nil), agg: sampler.NewAggregator(cad.policy.IdleUtilPct, time.Time{}),
		det: detect.New(name, cad.policy, quiet{}, quiet{}, o, nil)}
}

// run paces the agent until ctx ends, starting after delay (nodes of a
// real fleet were not all started in the same second).
func (a *agent) run(ctx context.Context, delay time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(delay):
	}
	done := make(chan struct{})
	go func() { defer close(done); a.sampleLoop(ctx) }()
	a.portalLoop(ctx)
	<-done
}

func (a *agent) sampleLoop(ctx context.Context) {
	select { // the real agent reads its schedule cache before sampling
	case <-ctx.Done():
		return
	case <-a.synced:
	}
	a.primeIdle()
	t := time.NewTicker(a.cad.sample)
	defer t.Stop()
	for {
		a.sampleOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// primeIdle shows the detector one sample from a random moment of the
// last IdleAfter, as if the agent had been running: the idle booking is
// then reported at some point of the run, not by every node at once
// IdleAfter after the start.
func (a *agent) primeIdle() {
	back := time.Duration(rand.Int64N(int64(a.cad.policy.IdleAfter)))
	snap, _ := a.smp.Sample(context.Background(), a.now().Add(-back))
	a.mu.Lock()
	b := a.sched.Bookings
	a.mu.Unlock()
	a.det.Observe(snap, b)
}

// sampleOnce is daemon.SampleOnce without the device lock, the metrics
// and the status file.
func (a *agent) sampleOnce(ctx context.Context) {
	snap, _ := a.smp.Sample(ctx, a.now())
	a.mu.Lock()
	bookings := a.sched.Bookings
	a.mu.Unlock()
	for _, part := range wire.SplitUsage(a.agg.Add(snap)) {
		b := wire.UsageBatch{Node: a.name, Records: part}
		a.append(wire.PathUsage, func(id string) any { b.BatchID = id; return b }, len(part), part[0].Minute)
	}
	ev := a.det.Observe(snap, bookings)
	for _, part := range wire.SplitViolations(ev.Violations) {
		a.append(wire.PathViolations, func(id string) any { return wire.ViolationBatch{Node: a.name, BatchID: id, Violations: part} }, 0, time.Time{})
	}
	for _, part := range wire.SplitIdle(ev.Idle) {
		a.append(wire.PathIdle, func(id string) any { return wire.IdleBatch{Node: a.name, BatchID: id, Reports: part} }, 0, time.Time{})
	}
}

// append spools one batch, named as the daemon names it (batchID).
func (a *agent) append(path string, build func(id string) any, records int, minute time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	body, _ := json.Marshal(build(a.name + "-" + strconv.FormatUint(a.seq, 10)))
	a.spool = append(a.spool, entry{path: path, body: body, records: records, minute: minute, created: a.now()})
	a.tally.made.Add(int64(records))
}

func (a *agent) portalLoop(ctx context.Context) {
	syncT, deliverT, beatT := time.NewTicker(a.cad.sync), time.NewTicker(a.cad.deliver), time.NewTicker(a.cad.heartbeat)
	defer syncT.Stop()
	defer deliverT.Stop()
	defer beatT.Stop()
	a.syncOnce(ctx)
	a.heartbeatOnce(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-syncT.C:
			a.syncOnce(ctx)
		case <-deliverT.C:
			a.deliverOnce(ctx)
		case <-beatT.C:
			a.heartbeatOnce(ctx)
		}
	}
}

// syncOnce is daemon.SyncOnce: the inventory once, then the schedule with
// its ETag (a 304 when nothing changed).
func (a *agent) syncOnce(ctx context.Context) {
	if !a.sendInventory(ctx) {
		return
	}
	a.mu.Lock()
	etag := a.etag
	a.mu.Unlock()
	s, newETag, changed, err := a.portal.Schedule(ctx, etag)
	if err != nil {
		return
	}
	a.mu.Lock()
	if changed {
		a.sched, a.etag = s, newETag
	}
	select {
	case <-a.synced:
	default:
		close(a.synced)
	}
	a.mu.Unlock()
}

func (a *agent) sendInventory(ctx context.Context) bool {
	a.mu.Lock()
	sent := a.invSent
	a.mu.Unlock()
	if sent {
		return true
	}
	inv := wire.Inventory{Node: a.name, AgentVersion: agentVersion, DriverVersion: "550.54.15", ReportedAt: a.now().UTC()}
	for _, d := range a.src.devices {
		inv.GPUs = append(inv.GPUs, wire.GPU{UUID: d.UUID, Index: d.Index, Minor: d.Minor, Model: d.Model, MemoryMiB: d.MemoryMiB})
	}
	if a.portal.PutInventory(ctx, inv) != nil {
		return false
	}
	a.mu.Lock()
	a.invSent = true
	a.mu.Unlock()
	return true
}

// deliverOnce is daemon.DeliverOnce: the spool, oldest first, until the
// first failure or a usage batch that waits for the node's slot; a batch
// the portal refuses as invalid is set aside.
func (a *agent) deliverOnce(ctx context.Context) {
	if !a.sendInventory(ctx) {
		return
	}
	slot := spool.Slot(a.name, a.cad.spread)
	for {
		a.mu.Lock()
		if len(a.spool) == 0 {
			a.mu.Unlock()
			return
		}
		e := a.spool[0]
		a.mu.Unlock()
		if e.path == wire.PathUsage && spool.UsageWaits(e.created, a.now(), slot) {
			return
		}
		err := a.portal.PostRaw(ctx, e.path, e.body)
		if err != nil && !client.Invalid(err) {
			return
		}
		a.mu.Lock()
		a.spool = a.spool[1:]
		a.mu.Unlock()
		if err == nil {
			a.tally.taken.Add(int64(e.records))
		}
	}
}

// heartbeatOnce is daemon.HeartbeatOnce with what a simulated node knows.
func (a *agent) heartbeatOnce(ctx context.Context) {
	a.mu.Lock()
	hb := wire.Heartbeat{Node: a.name, AgentVersion: agentVersion, SentAt: a.now().UTC(), ScheduleETag: a.etag,
		SpoolDepth: len(a.spool), NVMLOK: true, Lock: "detect"}
	if len(a.spool) > 0 {
		hb.OldestSpooled = a.spool[0].minute
	}
	a.mu.Unlock()
	_ = a.portal.PostJSON(ctx, wire.PathHeartbeat, hb)
}

// lag is how long ago the oldest usage minute still spooled ended (0
// when none is): a portal that keeps up takes each minute within about
// one sample, the node's slot and one delivery interval of its end.
func (a *agent) lag(now time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.spool {
		if e.records > 0 {
			return now.Sub(e.minute.Add(time.Minute))
		}
	}
	return 0
}
