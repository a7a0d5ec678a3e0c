// Package daemon wires the agent: sample → aggregate → detect → spool on one
// loop, schedule sync → cache and spool → portal on another, so a slow or
// absent portal never delays sampling. Each step is a method the tests call
// directly with an injected clock; Run only paces them with tickers.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/metrics"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// Portal is what the daemon needs from agent/client.
type Portal interface {
	PutInventory(ctx context.Context, inv wire.Inventory) error
	Schedule(ctx context.Context, etag string) (wire.Schedule, string, bool, error)
	PostJSON(ctx context.Context, path string, v any) error
	PostRaw(ctx context.Context, path string, body []byte) error
}

// Config is the daemon's settings, parsed in cmd/gpubook-agent.
type Config struct {
	Node          string
	AgentVersion  string
	DriverVersion string
	CachePath     string
	StatusPath    string
	WatermarkPath string
	// MinutePath keeps the minute being aggregated, saved after every
	// sample, so that a crash or a restart loses none of it; "" keeps it
	// in memory only (Stop then spools the partial minute).
	MinutePath        string
	SampleInterval    time.Duration
	SyncInterval      time.Duration
	DeliverInterval   time.Duration
	HeartbeatInterval time.Duration
	// UsageSpread spreads a fleet's usage over the minute: a closed
	// minute waits for the node's own moment in [0, UsageSpread) after
	// it (spool.Slot) before it is sent; 0 sends it at the next delivery.
	UsageSpread time.Duration
	BusyPct     float64
	// NVMLRetry and NVMLRetryMax pace the attempts to open the GPUs when
	// they failed at start (driver not loaded yet at boot): 5 s doubling up
	// to 5 min when zero.
	NVMLRetry, NVMLRetryMax time.Duration
	// DetectStatePath keeps the violating processes (grace periods,
	// escalations) across restarts; "" keeps them in memory only.
	DetectStatePath string
	// MetricsProblem is why /metrics is not served ("" when it is), shown
	// in status: the daemon runs on without it.
	MetricsProblem string
	// LockMode says how the node enforces bookings, for status and the
	// heartbeat: "lock v1", "lock v2", "detect", or "detect (cannot lock:
	// REASON)" when lock was asked for and the node cannot do it.
	LockMode string
}

// Deps are the daemon's collaborators. Source may be nil when NVML could
// not start: the daemon then still keeps the schedule cache fresh, so that
// logins keep working, reports nvml_ok=false with the time since when, and
// retries OpenSource with backoff until the GPUs answer.
type Deps struct {
	Source     gpu.Source
	OpenSource OpenSource
	Resolver   sampler.Resolver
	Portal     Portal
	Spool      *spool.Spool
	Detector   *detect.Detector
	Metrics    *metrics.Exporter
	Lock       Locker // nil unless enforce = lock works on this node
	Now        func() time.Time
	Log        *slog.Logger
}

// Daemon is one running agent.
type Daemon struct {
	cfg  Config
	deps Deps
	log  *slog.Logger

	devices []gpu.Device
	sampler *sampler.Sampler
	agg     *sampler.Aggregator

	mu        sync.Mutex
	sched     cache.File
	invSent   bool
	lastSync  time.Time
	syncErr   string
	lastSnap  sampler.Snapshot
	sampleErr string
	// sampleFailing is when the samples began failing since the last good
	// one; zero while sampling works.
	sampleFailing time.Time
	beatNow       chan struct{} // a heartbeat wanted now (sampling health changed)
	nvmlDown      time.Time     // since when no GPU source is attached; zero when one is
	nvmlErr       string
	lockErr       string                        // the device lock's last error, "" when it applied
	lockGuards    int                           // GPUs the device lock's last successful sync guarded
	migs          map[string][]lock.MIGInstance // GPUs in MIG mode → their instances, as last seen

	// refused holds the episodes of refused opens being reported
	// (refused.go); the sample loop alone uses it.
	refused map[refusedKey]*refusedEpisode
}

// New loads the cached schedule (so enforcement works from the first
// sample even while the portal is down) and the spool watermark.
func New(ctx context.Context, cfg Config, deps Deps) (*Daemon, error) {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	d := &Daemon{cfg: cfg, deps: deps, log: deps.Log, beatNow: make(chan struct{}, 1)}
	if f, err := cache.Read(ctx, cfg.CachePath, 5*time.Second); err == nil {
		d.sched = f
	} else {
		d.log.Info("agent: no usable schedule cache yet", "err", err)
	}
	if deps.Detector != nil && cfg.DetectStatePath != "" {
		if err := deps.Detector.LoadState(cfg.DetectStatePath); err != nil {
			d.log.Error("agent: grace periods not restored", "err", err)
		}
	}
	after, err := readWatermark(cfg.WatermarkPath)
	if err != nil {
		return nil, err
	}
	d.agg = sampler.NewAggregator(cfg.BusyPct, after)
	d.restoreMinute(after)
	if deps.Source == nil {
		d.nvmlDown, d.nvmlErr = deps.Now().UTC(), "not opened yet"
		return d, nil
	}
	if err := d.attach(ctx, deps.Source, cfg.DriverVersion); err != nil {
		return nil, err
	}
	return d, nil
}

// bookings returns the cached schedule's bookings.
func (d *Daemon) bookings() []wire.Booking {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sched.Schedule.Bookings
}

// SampleOnce samples, aggregates, detects and spools what is complete.
func (d *Daemon) SampleOnce(ctx context.Context) error {
	if !d.gpuReady() {
		return errors.New("agent: daemon: no GPU source (NVML unavailable)")
	}
	snap, sampleErr := d.sampler.Sample(ctx, d.deps.Now())
	d.followLayout(snap)
	bookings := d.bookings()
	d.syncLock(snap, bookings)
	d.mu.Lock()
	d.lastSnap = snap
	changed := d.noteSampleLocked(sampleErr, snap.At)
	d.mu.Unlock()
	if changed {
		d.wakeHeartbeat()
	}
	if d.deps.Metrics != nil {
		d.deps.Metrics.SetSnapshot(snap, bookings)
	}
	if err := d.spoolUsage(d.agg.Add(snap)); err != nil {
		return err
	}
	d.saveMinute()
	if d.deps.Detector != nil {
		ev := d.deps.Detector.Observe(snap, bookings)
		if len(ev.Violations) > 0 && d.cfg.DetectStatePath != "" {
			if err := d.deps.Detector.SaveState(d.cfg.DetectStatePath); err != nil {
				d.log.Error("agent: grace periods not saved", "err", err)
			}
		}
		if err := d.spoolEvents(ev); err != nil {
			return err
		}
	}
	d.writeStatus()
	if sampleErr != nil {
		return fmt.Errorf("agent: daemon: sample: %w", sampleErr)
	}
	return nil
}

// Stop saves the minute in progress, which the next start resumes (same
// minute) or spools (later); without MinutePath it spools the partial
// minute, and a restart within that minute loses the rest of it.
func (d *Daemon) Stop() error {
	if d.cfg.MinutePath != "" {
		return d.agg.Save(d.cfg.MinutePath)
	}
	return d.spoolUsage(d.agg.Flush())
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
