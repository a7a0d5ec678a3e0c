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
// it every 30 s (cmd/gpubook), for the week the pages open on and the
// weeks in progress viewed on it within warmViewed, and keeps the part
// under the key that the next
// view computes (report_rolled.go) — the same statements in a snapshot of
// their own, so that a part kept this way is the part the view would
// have read. When nothing changed, the key is found kept and nothing is
// read but the stamps.

// warmViewed is how recently a week must have been viewed for
// WarmUsagePages to read it again, renewViewed for it to renew the kept
// week (a computation of the whole week, not a part: at 50,000 GPUs about
// a second each half minute while someone looks); warmViews is how many
// weeks it keeps track of (a week per zone and rules: one in practice).
const (
	warmViewed  = time.Hour
	renewViewed = 10 * time.Minute
	warmViews   = 4
)

// rolledView is the latest view of a week in progress: the week, the
// rules and the view's now, and when (wall clock) it came.
type rolledView struct {
	key liveKey
	w   models.Week
	now time.Time
	at  time.Time
}

// viewed records a view of week w at now.
func (k *rolledWeeks) viewed(key liveKey, w models.Week, now time.Time) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, v := range k.views {
		if v.key == key {
			k.views = append(k.views[:i:i], k.views[i+1:]...)
			break
		}
	}
	if len(k.views) >= warmViews {
		k.views = append(k.views[:0:0], k.views[len(k.views)-warmViews+1:]...)
	}
	k.views = append(k.views, rolledView{key: key, w: w, now: now, at: time.Now()})
}

// recent is the views that came since since.
func (k *rolledWeeks) recent(since time.Time) []rolledView {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []rolledView
	for _, v := range k.views {
		if v.at.After(since) {
			out = append(out, v)
		}
	}
	return out
}

// WarmUsagePages keeps the usage pages ready with no viewer waiting. The
// week every page opens on (the week in progress in zone loc as of now,
// with rules: the handlers' own) it keeps ready whether or not anyone
// viewed it (warmOpenWeek). Each other week in progress viewed on this
// replica lately it reads again the rolled part of, as of the view's now
// moved on by the time since, unless it is kept already; a kept week
// (report_live.go) viewed within renewViewed whose renewal is due it
// renews.
func (db *DB) WarmUsagePages(ctx context.Context, now time.Time, loc *time.Location, rules models.ReportRules) error {
	if err := db.warmOpenWeek(ctx, models.WeekOf(now, loc), now, rules); err != nil {
		return err
	}
	for _, v := range db.rolled.recent(time.Now().Add(-warmViewed)) {
		since := time.Since(v.at)
		now := v.now.Add(since)
		if !now.Before(v.w.End) {
			continue
		}
		if err := db.warmRolled(ctx, v.w, now, v.key.rules); err != nil {
			return err
		}
		if since >= renewViewed {
			continue
		}
		if _, err := db.live.renewDue(ctx, v.key, db.liveCompute(v.w, now, v.key.rules)); err != nil {
			return fmt.Errorf("store: renew usage week: %w", err)
		}
	}
	return nil
}

// warmOpenWeek keeps week w, the one every usage page opens on, ready as
// of now: its rolled part read again once a roll moved it on and, at a
// cluster whose weeks in progress are kept (liveKeepGPUs), the week
// itself computed when none is kept and renewed when its renewal is due.
// Before, only a view started a week: at 50,000 GPUs the first view after
// a replica started, or after ten minutes nobody looked (a lab's first
// viewer of the morning), computed it while the person waited, 0.3–4 s.
// The price is one computation of the week per warm tick on a large
// cluster, viewed or not (docs/performance.md has the figure).
func (db *DB) warmOpenWeek(ctx context.Context, w models.Week, now time.Time, rules models.ReportRules) error {
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
