package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// A roll moves the generation of the rolled hours, and the usage pages'
// next view read the week's rolled part again before it could answer: at
// 512 GPUs 180–450 ms, at 16,000 seconds, paid by whoever came first.
// WarmUsagePages reads it in the background instead: each replica runs
// it at start and every 30 s (cmd/gpubook) for the week the pages open
// on, and keeps the part under the key that the next view computes
// (report_rolled.go) — the same statements in a snapshot of their own, so
// that a part kept this way is the part the view would have read. When
// nothing changed, the key is found kept and nothing is read but the
// stamps.
//
// That week is the only week in progress any page of a replica reads:
// the handlers read it in the cluster's zone with the cluster's rules,
// the same ones serve hands the warm, and an ended week is read from its
// snapshot. So the warm needs no record of what was viewed.

// WarmUsagePages keeps the week every usage page opens on (the week in
// progress in zone loc as of now, with rules: the handlers' own) ready
// with no viewer waiting, whether or not anyone viewed it: its rolled
// part read again once a roll moved it on and, at a cluster whose weeks
// in progress are kept (liveKeepGPUs), the week itself computed when none
// is kept and renewed when due. Before, only a view started a week: at
// 50,000 GPUs the first view after a replica started, or after ten
// minutes nobody looked (a lab's first viewer of the morning), computed
// it while the person waited, 8.6 s with 12 hours of minutes. The price
// is one computation of the week per tick on a large cluster, viewed or
// not (1.2 s at 50,000 GPUs, docs/performance.md).
func (db *DB) WarmUsagePages(ctx context.Context, now time.Time, loc *time.Location, rules models.ReportRules) error {
	w := models.WeekOf(now, loc)
	if err := db.warmRolled(ctx, w, now, rules); err != nil {
		return err
	}
	keep, err := db.keepsLiveWeeks(ctx)
	if err != nil || !keep {
		return err
	}
	key, compute := liveKeyOf(w, rules), db.liveCompute(w, now, rules)
	renewed, err := db.live.renewDue(ctx, key, compute)
	if !renewed && err == nil {
		// Computes only when no week is kept or computing; a kept one
		// whose renewal is not due yet is left as it is.
		_, err = db.live.share(ctx, key, true, compute)
	}
	if err != nil {
		return fmt.Errorf("store: keep the open usage week: %w", err)
	}
	return nil
}

// warmRolled reads week w's rolled part as a view at now would
// (reportWeek, reportFigures), into the kept parts.
func (db *DB) warmRolled(ctx context.Context, w models.Week, now time.Time, rules models.ReportRules) error {
	rules = rules.OrDefault()
	spans := models.ReportSpans(w, now)
	q := reportSQL{pg: db.Dialect == Postgres, rules: rules}
	return db.reportSnapshot(ctx, func(g *gorm.DB) error {
		r, err := db.reportRead(g, q, w, spans, true)
		if err != nil {
			return err
		}
		if lo, hi := bounds(r.spans); !lo.Before(hi) {
			return nil
		}
		_, err = db.rolled.read(g, r.q, r.spans, r.q.plan, r.plan(r.spans[:models.ReportDays]))
		return err
	})
}
