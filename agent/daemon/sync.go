package daemon

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// agentGPUs converts the devices to wire form, a GPU in MIG mode with its
// slices and instances; d.mu must be held.
func (d *Daemon) agentGPUs() []wire.GPU {
	out := make([]wire.GPU, len(d.devices))
	for i, g := range d.devices {
		out[i] = wire.GPU{UUID: g.UUID, Index: g.Index, Minor: g.Minor, Model: g.Model, MemoryMiB: g.MemoryMiB, MIG: g.MIG}
		if !g.MIG || len(g.Instances) == 0 {
			continue
		}
		out[i].MIGSlices = g.MIGSlices
		for _, in := range g.Instances {
			out[i].Instances = append(out[i].Instances, wire.MIGInstance{UUID: in.UUID, Profile: in.Profile,
				GPUInstance: in.GPUInstanceID, ComputeInstance: in.ComputeInstanceID, Slices: in.Slices, MemoryMiB: in.MemTotalMiB})
		}
	}
	return out
}

// SyncOnce reports the inventory if not yet done, then fetches the schedule
// with its ETag and rewrites the cache when it changed (and every 5 min on
// 304, so that `env` can tell a fresh cache from a stale one).
func (d *Daemon) SyncOnce(ctx context.Context) error {
	if err := d.sendInventory(ctx); err != nil {
		return d.syncFailed(err)
	}
	d.mu.Lock()
	etag, fetched := d.sched.ETag, d.sched.FetchedAt
	d.mu.Unlock()
	s, newETag, changed, err := d.deps.Portal.Schedule(ctx, etag)
	if err != nil {
		return d.syncFailed(err)
	}
	now := d.deps.Now()
	d.mu.Lock()
	// A GPU's MIG layout changed: the cache's GPU list, which names the
	// instances in login hints, is rewritten at once.
	relisted := !reflect.DeepEqual(d.sched.GPUs, d.agentGPUs())
	d.mu.Unlock()
	if changed || relisted || now.Sub(fetched) >= 5*time.Minute {
		d.mu.Lock()
		f := d.sched
		if changed {
			f.Schedule, f.ETag = s, newETag
		}
		f.FetchedAt, f.GPUs = now.UTC(), d.agentGPUs()
		d.mu.Unlock()
		if err := cache.Write(d.cfg.CachePath, f); err != nil {
			return d.syncFailed(err)
		}
		d.mu.Lock()
		d.sched = f
		d.mu.Unlock()
	}
	d.synced(now)
	return nil
}

func (d *Daemon) sendInventory(ctx context.Context) error {
	d.mu.Lock()
	skip := d.invSent || d.sampler == nil
	inv := wire.Inventory{Node: d.cfg.Node, AgentVersion: d.cfg.AgentVersion, DriverVersion: d.cfg.DriverVersion,
		ReportedAt: d.deps.Now().UTC(), GPUs: d.agentGPUs()}
	d.mu.Unlock()
	if skip {
		return nil
	}
	if err := inv.Validate(); err != nil {
		// The driver reported a MIG layout the portal would refuse, and with
		// it the whole inventory (and every report after it): send the GPUs
		// without their instances, which then cannot be booked, and say so.
		d.log.Error("agent: MIG layout not reportable; GPUs sent without their instances", "err", err)
		for i := range inv.GPUs {
			inv.GPUs[i].MIGSlices, inv.GPUs[i].Instances = 0, nil
		}
	}
	if err := d.deps.Portal.PutInventory(ctx, inv); err != nil {
		return fmt.Errorf("agent: daemon: inventory: %w", err)
	}
	d.mu.Lock()
	d.invSent = true
	d.mu.Unlock()
	return nil
}

// DeliverOnce drains the spool to the portal, oldest first, up to a usage
// minute that waits for the node's slot (Config.UsageSpread). It waits
// until the portal has accepted the inventory: usage for a GPU the portal
// does not know yet would be refused for good and lost.
func (d *Daemon) DeliverOnce(ctx context.Context) error {
	slot := spool.Slot(d.cfg.Node, d.cfg.UsageSpread)
	return d.deliver(ctx, func(e spool.Entry) bool {
		return e.Kind == wire.PathUsage && spool.UsageWaits(e.CreatedAt, d.deps.Now(), slot)
	})
}

// deliver is DeliverOnce with what waits (nil: nothing, as at stop).
func (d *Daemon) deliver(ctx context.Context, wait func(spool.Entry) bool) error {
	defer d.updateSpoolMetrics()
	if err := d.sendInventory(ctx); err != nil {
		return d.syncFailed(err)
	}
	n, err := d.deps.Spool.Drain(ctx, func(ctx context.Context, e spool.Entry) error {
		sctx, cancel := withGrace(ctx, sendGrace)
		defer cancel()
		return d.deps.Portal.PostRaw(sctx, e.Kind, e.Body)
	}, client.Invalid, wait)
	if n > 0 {
		d.synced(d.deps.Now())
	}
	if err != nil {
		return d.syncFailed(err)
	}
	return nil
}

// sendGrace is how long a send already under way may go on once the agent
// is stopping: cancelling it could lose the portal's answer to a batch the
// portal took, and the batch would go again at the next start.
const sendGrace = 5 * time.Second

// withGrace is a context that ends grace after ctx does (or at cancel).
func withGrace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var timer *time.Timer
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		timer = time.AfterFunc(grace, cancel)
		mu.Unlock()
	})
	return out, func() {
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// HeartbeatOnce tells the portal the agent is alive.
func (d *Daemon) HeartbeatOnce(ctx context.Context) error {
	st := d.deps.Spool.Stats()
	d.mu.Lock()
	hb := wire.Heartbeat{Node: d.cfg.Node, AgentVersion: d.cfg.AgentVersion, SentAt: d.deps.Now().UTC(),
		ScheduleETag: d.sched.ETag, SpoolDepth: st.Depth, OldestSpooled: st.Oldest, NVMLOK: d.sampler != nil,
		SpoolSetAside: st.SetAside, SpoolSetAsideReason: st.SetAsideReason, SpoolSetAsideAt: st.SetAsideAt,
		SpoolDroppedUsage: st.Dropped[spool.Tag(wire.PathUsage)], SpoolDroppedEvents: st.DroppedTotal() - st.Dropped[spool.Tag(wire.PathUsage)],
		NVMLDownSince: d.nvmlDown, Lock: d.lockStatus(),
		SampleError: heartbeatText(d.sampleErr, maxSampleErrorLen), SampleFailingSince: d.sampleFailing}
	d.mu.Unlock()
	if err := d.deps.Portal.PostJSON(ctx, wire.PathHeartbeat, hb); err != nil {
		return d.syncFailed(err)
	}
	d.synced(d.deps.Now())
	return nil
}

func (d *Daemon) synced(t time.Time) {
	d.mu.Lock()
	d.lastSync, d.syncErr = t, ""
	d.mu.Unlock()
	if d.deps.Metrics != nil {
		d.deps.Metrics.SetLastSync(t)
	}
}

func (d *Daemon) syncFailed(err error) error {
	d.mu.Lock()
	d.syncErr = err.Error()
	d.mu.Unlock()
	return err
}

func (d *Daemon) updateSpoolMetrics() {
	if d.deps.Metrics != nil {
		d.deps.Metrics.SetSpool(d.deps.Spool.Stats())
	}
}
