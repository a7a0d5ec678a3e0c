package store

import (
	"context"
	"fmt"
	"time"
)

// FirstActivity is the start of the portal's first booking (imported ones
// included, whatever their status) or first stored usage (minutes or
// hourly sums); ok is false when there is neither. The weekly send skips
// the weeks before it (models.WeekBeforePortal).
func (db *DB) FirstActivity(ctx context.Context) (first time.Time, ok bool, err error) {
	g := db.Gorm.WithContext(ctx)
	var b []time.Time
	if err := g.Table("bookings").Order("starts_at").Limit(1).Pluck("starts_at", &b).Error; err != nil {
		return time.Time{}, false, fmt.Errorf("store: first activity: %w", err)
	}
	var m []time.Time
	if err := g.Model(&UsageRow{}).Order("minute").Limit(1).Pluck("minute", &m).Error; err != nil {
		return time.Time{}, false, fmt.Errorf("store: first activity: %w", err)
	}
	var h []int64
	if err := g.Table("usage_hours").Order("unix_hour").Limit(1).Pluck("unix_hour", &h).Error; err != nil {
		return time.Time{}, false, fmt.Errorf("store: first activity: %w", err)
	}
	for _, t := range append(b, m...) {
		if !ok || t.Before(first) {
			first, ok = t.UTC(), true
		}
	}
	if len(h) > 0 {
		if t := time.Unix(h[0]*3600, 0).UTC(); !ok || t.Before(first) {
			first, ok = t, true
		}
	}
	return first, ok, nil
}

// FrozenWeeks lists the names of the frozen weeks ("2026-W49").
func (db *DB) FrozenWeeks(ctx context.Context) (map[string]bool, error) {
	var names []string
	if err := db.Gorm.WithContext(ctx).Table("report_weeks").Pluck("week", &names).Error; err != nil {
		return nil, fmt.Errorf("store: frozen weeks: %w", err)
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out, nil
}
