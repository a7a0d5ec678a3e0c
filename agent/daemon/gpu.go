package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/sampler"
)

// OpenSource opens the GPU backend and returns it with the driver version.
// cmd/gpubook-agent passes one that initialises NVML; the daemon calls it
// again and again while it fails, because at boot the driver may load
// after the agent starts.
type OpenSource func(ctx context.Context) (gpu.Source, string, error)

// gpuReady reports whether a GPU source is attached.
func (d *Daemon) gpuReady() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sampler != nil
}

// attach reads src's devices and starts sampling them; the inventory is
// (re)sent on the next exchange with the portal.
func (d *Daemon) attach(ctx context.Context, src gpu.Source, driver string) error {
	devs, err := src.Devices(ctx)
	if err != nil {
		return fmt.Errorf("agent: daemon: devices: %w", err)
	}
	smp := sampler.New(src, d.deps.Resolver, devs, d.log)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.devices, d.sampler, d.cfg.DriverVersion = devs, smp, driver
	d.invSent, d.nvmlDown, d.nvmlErr = false, time.Time{}, ""
	return nil
}

// TryGPU makes one attempt to open and attach the GPU source when none is
// attached. It returns nil once one is attached.
func (d *Daemon) TryGPU(ctx context.Context) error {
	if d.gpuReady() {
		return nil
	}
	if d.deps.OpenSource == nil {
		return d.gpuFailed(fmt.Errorf("agent: daemon: no GPU source and no way to open one"))
	}
	src, driver, err := d.deps.OpenSource(ctx)
	if err == nil {
		err = d.attach(ctx, src, driver)
	}
	if err != nil {
		return d.gpuFailed(err)
	}
	d.log.Info("agent: GPUs available now; sampling and enforcement start", "driver", driver)
	return nil
}

func (d *Daemon) gpuFailed(err error) error {
	d.mu.Lock()
	if d.nvmlDown.IsZero() {
		d.nvmlDown = d.deps.Now().UTC()
	}
	d.nvmlErr = err.Error()
	d.mu.Unlock()
	return err
}

// waitForGPU retries TryGPU with doubling delays until it succeeds or ctx
// ends, rewriting the status file meanwhile so that `status` shows the
// daemon running, degraded, rather than not at all.
func (d *Daemon) waitForGPU(ctx context.Context) {
	delay, most := d.cfg.NVMLRetry, d.cfg.NVMLRetryMax
	if delay <= 0 {
		delay = 5 * time.Second
	}
	if most <= 0 {
		most = 5 * time.Minute
	}
	for {
		err := d.TryGPU(ctx)
		d.writeStatus()
		if err == nil {
			return
		}
		d.log.Error("agent: NVML unavailable; no sampling or enforcement until it answers", "err", err, "retry_in", delay.String())
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(delay*2, most)
	}
}
