package daemon

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gpubook/gpubook/agent/atomicfile"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/models/wire"
)

// spoolUsage stores completed minutes as usage batches (one, unless the
// portal's limits make it cut them: wire.SplitUsage), then moves the
// watermark past them. Order matters: spool first, so a crash in between
// can only make a minute be sent twice (harmless), never lost.
func (d *Daemon) spoolUsage(recs []wire.UsageRecord) error {
	if len(recs) == 0 {
		return nil
	}
	for _, part := range wire.SplitUsage(recs) {
		b := wire.UsageBatch{Node: d.cfg.Node, Records: part}
		if err := b.Validate(); err != nil {
			return fmt.Errorf("agent: daemon: usage batch: %w", err)
		}
		e, err := d.deps.Spool.AppendSeq(wire.PathUsage, func(seq uint64) any {
			b.BatchID = batchID(d.cfg.Node, seq)
			return b
		})
		if err != nil {
			return err
		}
		d.log.Debug("agent: spooled usage", "seq", e.Seq, "records", len(part))
	}
	last := recs[0].Minute
	for _, r := range recs {
		if r.Minute.After(last) {
			last = r.Minute
		}
	}
	return writeWatermark(d.cfg.WatermarkPath, last)
}

// spoolEvents stores violations and idle reports, in batches the portal
// accepts, and counts them.
func (d *Daemon) spoolEvents(ev detect.Events) error {
	for _, v := range ev.Violations {
		d.log.Warn("agent: violation", "kind", v.Kind, "gpu", v.GPUUUID, "user", v.User, "pid", v.PID, "action", v.Action)
	}
	if d.deps.Metrics != nil && len(ev.Violations) > 0 {
		d.deps.Metrics.AddViolations(ev.Violations)
	}
	for _, part := range wire.SplitViolations(ev.Violations) {
		if _, err := d.deps.Spool.AppendSeq(wire.PathViolations, func(seq uint64) any {
			return wire.ViolationBatch{Node: d.cfg.Node, BatchID: batchID(d.cfg.Node, seq), Violations: part}
		}); err != nil {
			return err
		}
	}
	for _, r := range ev.Idle {
		d.log.Info("agent: idle booking", "booking", r.BookingID, "user", r.User, "gpus", r.GPUUUIDs, "since", r.IdleSince)
	}
	for _, part := range wire.SplitIdle(ev.Idle) {
		if _, err := d.deps.Spool.AppendSeq(wire.PathIdle, func(seq uint64) any {
			return wire.IdleBatch{Node: d.cfg.Node, BatchID: batchID(d.cfg.Node, seq), Reports: part}
		}); err != nil {
			return err
		}
	}
	return nil
}

// watermark is the last minute already spooled, kept across restarts.
type watermark struct {
	LastMinute time.Time `json:"last_minute"`
}

func readWatermark(path string) (time.Time, error) {
	var w watermark
	_, err := atomicfile.ReadJSON(path, &w)
	if errors.Is(err, atomicfile.ErrDamaged) {
		// A damaged watermark must not stop the agent; at worst one minute
		// is emitted again and the portal ignores the duplicate key.
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("agent: daemon: watermark: %w", err)
	}
	return w.LastMinute, nil
}

func writeWatermark(path string, t time.Time) error {
	if err := atomicfile.WriteJSON(path, watermark{LastMinute: t.UTC()}, 0o600); err != nil {
		return fmt.Errorf("agent: daemon: watermark: %w", err)
	}
	return nil
}

// batchID names a spooled batch in logs on both sides.
func batchID(node string, seq uint64) string { return node + "-" + strconv.FormatUint(seq, 10) }
