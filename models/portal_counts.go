package models

import (
	"context"
	"time"
)

// BookingPhases are the phases PortalCounts counts bookings in, every one
// always present so that a monitoring series never vanishes at zero.
var BookingPhases = []BookingPhase{PhaseUpcoming, PhaseActive, PhasePast, PhaseCancelled}

// RequestStatuses are the states of a priority request, in their order of life.
var RequestStatuses = []string{RequestPending, RequestApproved, RequestDenied, RequestExpired, RequestWithdrawn}

// PortalCounts is the portal's state in numbers, read for monitoring.
type PortalCounts struct {
	// Bookings by phase at the time asked (Booking.Phase's rule).
	Bookings map[BookingPhase]int64
	// Requests are priority requests by status.
	Requests map[string]int64
	// AgentsOnline and AgentsOffline split the enrolled nodes by
	// NodeOffline's rule.
	AgentsOnline, AgentsOffline int64
}

// PortalCountsStore reads PortalCounts; the metrics exporter consumes it.
type PortalCountsStore interface {
	PortalCounts(ctx context.Context, now time.Time) (PortalCounts, error)
	OutboxStats(ctx context.Context) (OutboxStats, error)
}
