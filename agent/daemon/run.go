package daemon

import (
	"context"
	"time"
)

// Run paces the steps until ctx ends, then saves (or, without MinutePath,
// spools) the partial minute and makes a last delivery attempt, of
// everything spooled. Sampling and the portal exchange run on separate
// goroutines: retries against a dead portal take tens of seconds.
func (d *Daemon) Run(ctx context.Context) error {
	d.writeStatus() // `status` can tell a running daemon from the start
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.portalLoop(ctx)
	}()
	d.sampleLoop(ctx)
	<-done
	if err := d.Stop(); err != nil {
		d.log.Error("agent: flush at stop", "err", err)
	}
	last, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.deliver(last, nil); err != nil { // nothing waits for its slot at stop
		d.log.Info("agent: last delivery before stop", "err", err)
	}
	d.writeStatus()
	return nil
}

func (d *Daemon) sampleLoop(ctx context.Context) {
	d.waitForGPU(ctx)
	if ctx.Err() != nil {
		return
	}
	t := time.NewTicker(d.cfg.SampleInterval)
	defer t.Stop()
	for {
		if err := d.SampleOnce(ctx); err != nil {
			d.log.Warn("agent: sample", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (d *Daemon) portalLoop(ctx context.Context) {
	syncT := time.NewTicker(d.cfg.SyncInterval)
	deliverT := time.NewTicker(d.cfg.DeliverInterval)
	beatT := time.NewTicker(d.cfg.HeartbeatInterval)
	defer syncT.Stop()
	defer deliverT.Stop()
	defer beatT.Stop()
	d.step(ctx, "sync", d.SyncOnce)
	d.step(ctx, "heartbeat", d.HeartbeatOnce)
	for {
		select {
		case <-ctx.Done():
			return
		case <-syncT.C:
			d.step(ctx, "sync", d.SyncOnce)
		case <-deliverT.C:
			d.step(ctx, "deliver", d.DeliverOnce)
		case <-beatT.C:
			d.step(ctx, "heartbeat", d.HeartbeatOnce)
		case <-d.beatNow:
			d.step(ctx, "heartbeat", d.HeartbeatOnce)
		}
	}
}

func (d *Daemon) step(ctx context.Context, name string, f func(context.Context) error) {
	if err := f(ctx); err != nil && ctx.Err() == nil {
		d.log.Warn("agent: "+name, "err", err)
	}
}
