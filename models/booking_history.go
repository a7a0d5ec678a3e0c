package models

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// BookingEvent is one thing that happened to a booking after it was made,
// as "My bookings" tells its owner: what, when, by whom and why.
type BookingEvent struct {
	BookingID int64
	Action    string // AuditBookingCancel, AuditBookingPreempt, AuditBookingService, ...
	// How says how it gave way or what the admin chose: move, split, cancel.
	How     string
	At      time.Time
	By      string // the actor's label (email, "cli", "system")
	Reason  string // an admin's reason, for a GPU taken out of service
	Request int64  // the priority request it gave way to
}

// BookingHistoryActions are the audit actions "My bookings" shows.
var BookingHistoryActions = []string{AuditBookingCancel, AuditBookingRelease, AuditBookingPreempt, AuditBookingService}

// BookingEventOf reads an audit event as a booking event; ok is false for
// events that are not about what happened to a booking.
func BookingEventOf(e AuditEvent) (BookingEvent, bool) {
	id, err := strconv.ParseInt(e.TargetID, 10, 64)
	if e.TargetType != "booking" || err != nil {
		return BookingEvent{}, false
	}
	var d struct {
		Action    string `json:"action"`
		Reason    string `json:"reason"`
		RequestID int64  `json:"request_id"`
	}
	_ = json.Unmarshal([]byte(e.Details), &d) // an unreadable detail loses only the why
	ev := BookingEvent{BookingID: id, Action: e.Action, How: d.Action, At: e.At, By: e.ActorLabel, Reason: d.Reason, Request: d.RequestID}
	for _, a := range BookingHistoryActions {
		if a == e.Action {
			return ev, true
		}
	}
	return BookingEvent{}, false
}

// BookingHistoryStore reads what happened to a user's bookings.
type BookingHistoryStore interface {
	BookingHistory(ctx context.Context, ids []int64) (map[int64][]BookingEvent, error)
}
