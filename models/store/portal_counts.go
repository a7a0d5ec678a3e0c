package store

import (
	"context"
	"fmt"
	"time"

	"github.com/gpubook/gpubook/models"
)

// PortalCounts counts bookings by phase at now, priority requests by
// status and enrolled agents online and offline: three grouped counts,
// cheap enough to run on every Prometheus scrape. The phase expression is
// Booking.Phase's rule in SQL.
func (db *DB) PortalCounts(ctx context.Context, now time.Time) (models.PortalCounts, error) {
	out := models.PortalCounts{Bookings: map[models.BookingPhase]int64{}, Requests: map[string]int64{}}
	for _, p := range models.BookingPhases {
		out.Bookings[p] = 0
	}
	for _, s := range models.RequestStatuses {
		out.Requests[s] = 0
	}
	type group struct {
		K string
		N int64
	}
	g := db.Gorm.WithContext(ctx)
	t := utc(now)
	var rows []group
	err := g.Raw(`SELECT CASE
			WHEN status = ? THEN ?
			WHEN released_at IS NOT NULL AND released_at <= ? THEN ?
			WHEN starts_at > ? THEN ?
			WHEN ends_at > ? THEN ?
			ELSE ? END AS k, COUNT(*) AS n
		FROM bookings GROUP BY 1`,
		models.StatusCancelled, models.PhaseCancelled, t, models.PhasePast, t, models.PhaseUpcoming, t, models.PhaseActive, models.PhasePast).
		Scan(&rows).Error
	if err != nil {
		return models.PortalCounts{}, fmt.Errorf("store: count bookings: %w", err)
	}
	for _, r := range rows {
		out.Bookings[models.BookingPhase(r.K)] += r.N
	}
	rows = nil
	if err := g.Raw(`SELECT status AS k, COUNT(*) AS n FROM priority_requests GROUP BY status`).Scan(&rows).Error; err != nil {
		return models.PortalCounts{}, fmt.Errorf("store: count priority requests: %w", err)
	}
	for _, r := range rows {
		out.Requests[r.K] = r.N
	}
	var agents struct{ Online, Total int64 }
	err = g.Raw(`SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN last_seen_at > ? THEN 1 ELSE 0 END), 0) AS online
		FROM agent_nodes WHERE credential_hash IS NOT NULL`, t.Add(-models.NodeOfflineAfter)).Scan(&agents).Error
	if err != nil {
		return models.PortalCounts{}, fmt.Errorf("store: count agents: %w", err)
	}
	out.AgentsOnline, out.AgentsOffline = agents.Online, agents.Total-agents.Online
	return out, nil
}
