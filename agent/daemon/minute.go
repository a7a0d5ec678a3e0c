package daemon

import "time"

// restoreMinute loads the minute a previous process was aggregating when
// it stopped or died: resumed when this start falls in the same minute,
// spooled now when it ended since. Minutes between it (or the watermark)
// and now had no agent running; they are logged as a gap so that nobody
// reads their absence as idle GPUs.
func (d *Daemon) restoreMinute(watermark time.Time) {
	if d.cfg.MinutePath == "" {
		return
	}
	if err := d.agg.Load(d.cfg.MinutePath); err != nil {
		d.log.Error("agent: minute in progress before the restart not restored", "err", err)
	}
	now := d.deps.Now().UTC().Truncate(time.Minute)
	last := watermark
	if p := d.agg.Pending(); p.After(last) {
		last = p
	}
	if !last.IsZero() && now.Sub(last) > time.Minute {
		d.log.Warn("agent: no usage data while the agent was not running",
			"from", last.Add(time.Minute), "to", now.Add(-time.Minute), "minutes", int(now.Sub(last)/time.Minute)-1)
	}
	if err := d.spoolUsage(d.agg.Complete(now)); err != nil {
		d.log.Error("agent: minute in progress before the restart not spooled", "err", err)
	}
}

// saveMinute checkpoints the minute in progress after a sample. A failure
// is logged, not returned: sampling and enforcement go on, and only a
// crash before the next good save would cost that minute.
func (d *Daemon) saveMinute() {
	if d.cfg.MinutePath == "" {
		return
	}
	if err := d.agg.Save(d.cfg.MinutePath); err != nil {
		d.log.Error("agent: minute in progress not saved", "err", err)
	}
}
