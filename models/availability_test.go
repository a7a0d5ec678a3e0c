package models

import (
	"testing"
	"time"
)

func TestGPUStates(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 6, 3, h, 0, 0, 0, time.UTC) }
	gpus := []GPU{{ID: 1, InService: true}, {ID: 2, InService: true}, {ID: 3, InService: false}, {ID: 4, InService: true}}
	bookings := []Booking{
		{ID: 10, GPUIDs: []int64{1}, StartsAt: at(12), EndsAt: at(14), Status: StatusConfirmed, UserName: "Bob"},
		{ID: 11, GPUIDs: []int64{2}, StartsAt: at(16), EndsAt: at(18), Status: StatusConfirmed},
		{ID: 12, GPUIDs: []int64{4}, StartsAt: at(12), EndsAt: at(14), Status: StatusCancelled},
		{ID: 13, GPUIDs: []int64{1, 2}, StartsAt: at(9), EndsAt: at(10), Status: StatusConfirmed},
	}
	got := GPUStates(gpus, bookings, at(11), at(13))
	tests := []struct {
		name      string
		busy      int64 // booking ID, 0 for none
		free      bool
		freeUntil time.Time
	}{
		{"taken in the range", 10, false, at(12)},
		{"free, booked later", 0, true, at(16)},
		{"out of service", 0, false, time.Time{}},
		{"a cancelled booking does not block", 0, true, time.Time{}},
	}
	if len(got) != len(tests) {
		t.Fatalf("states = %d, want %d", len(got), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := got[i]
			var busy int64
			if s.Busy != nil {
				busy = s.Busy.ID
			}
			if s.GPU.ID != gpus[i].ID || busy != tt.busy || s.Free() != tt.free || !s.FreeUntil.Equal(tt.freeUntil) {
				t.Errorf("got gpu %d busy %d free %v until %v, want busy %d free %v until %v", s.GPU.ID, busy, s.Free(), s.FreeUntil, tt.busy, tt.free, tt.freeUntil)
			}
		})
	}
	// Touching ranges do not overlap: a booking ending at the start is no conflict.
	if s := GPUStates(gpus[:1], bookings, at(14), at(15))[0]; s.Busy != nil {
		t.Errorf("booking that ends at the start counts as busy: %+v", s.Busy)
	}
}
