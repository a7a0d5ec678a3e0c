package models_test

import (
	"testing"

	"github.com/gpubook/gpubook/models"
)

// TestPlanService: the bookings on GPU 1 taken out of service, each with
// the move offered (the target GPU) or none (0).
func TestPlanService(t *testing.T) {
	tests := []struct {
		name   string
		on     []models.Booking
		busy   []models.Booking
		now    float64
		wantTo map[int64]int64
	}{
		{name: "a future booking moves to the lowest free GPU of the same model",
			on: []models.Booking{bk(1, 20, []int64{1}, 10, 12)}, wantTo: map[int64]int64{1: 2}},
		{name: "a busy GPU is skipped",
			on: []models.Booking{bk(1, 20, []int64{1}, 10, 12)}, busy: []models.Booking{bk(9, 90, []int64{2}, 11, 13)}, wantTo: map[int64]int64{1: 3}},
		{name: "a running booking is never moved",
			on: []models.Booking{bk(1, 20, []int64{1}, 8, 12)}, now: 9, wantTo: map[int64]int64{1: 0}},
		{name: "no free GPU of the model: no move",
			on: []models.Booking{bk(1, 20, []int64{1}, 10, 12)}, busy: []models.Booking{bk(9, 90, []int64{2, 3, 4}, 0, 100)}, wantTo: map[int64]int64{1: 0}},
		{name: "two bookings never get the same free GPU",
			on:     []models.Booking{bk(2, 21, []int64{1}, 11, 13), bk(1, 20, []int64{1}, 10, 11)},
			busy:   []models.Booking{bk(9, 90, []int64{3, 4}, 0, 100), bk(8, 80, []int64{2}, 12.5, 14)},
			wantTo: map[int64]int64{1: 2, 2: 0}},
		{name: "a multi-GPU booking moves only its share of the leaving GPU",
			on: []models.Booking{bk(1, 20, []int64{1, 2}, 10, 12)}, wantTo: map[int64]int64{1: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := models.PlanService(1, tt.on, planGPUs, tt.busy, hour(tt.now))
			if len(got) != len(tt.on) {
				t.Fatalf("%d choices, want %d", len(got), len(tt.on))
			}
			for i, c := range got {
				if i > 0 && c.Booking.StartsAt.Before(got[i-1].Booking.StartsAt) {
					t.Errorf("choices not in start order: %d before %d", got[i-1].Booking.ID, c.Booking.ID)
				}
				to := int64(0)
				if c.CanMove() {
					if len(c.Moves) != 1 || c.Moves[0].From != 1 {
						t.Errorf("booking %d: moves %+v, want one off GPU 1", c.Booking.ID, c.Moves)
					}
					to = c.Moves[0].To
				}
				if to != tt.wantTo[c.Booking.ID] {
					t.Errorf("booking %d: moved to %d, want %d", c.Booking.ID, to, tt.wantTo[c.Booking.ID])
				}
			}
		})
	}
}

// TestNotificationFor: which email notices also appear in the app, with
// which link and dedup key.
func TestNotificationFor(t *testing.T) {
	to := &models.User{ID: 7}
	b := bk(42, 7, []int64{1}, 10, 12)
	p := models.Preemption{Booking: b, Action: models.GiveWayCancel, LostGPUSeconds: 7200}
	tests := []struct {
		name           string
		n              models.Notice
		ok             bool
		link, key, hrs string
	}{
		{"pre-emption", models.Notice{Kind: models.NoticePreempted, Request: models.PriorityRequest{ID: 9}, Booking: &b, Preemption: &p}, true,
			"/bookings?show=all#booking-42", "preempted:request:9:booking:42:user:7", "2"},
		{"decision", models.Notice{Kind: models.NoticeDecision, Request: models.PriorityRequest{ID: 9, Status: models.RequestApproved}}, true,
			"/requests/9", "decided:request:9:user:7", ""},
		{"reminders stay in email", models.Notice{Kind: models.NoticeReminderStart, Booking: &b}, false, "", "", ""},
		{"leads' new-request mail stays in email", models.Notice{Kind: models.NoticeNewRequest}, false, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := models.NotificationFor(tt.n, to, hour(0))
			if ok != tt.ok || got.Link != tt.link || got.DedupKey != tt.key || got.Params["Hours"] != tt.hrs {
				t.Errorf("got %+v, %v; want ok %v, link %q, key %q, hours %q", got, ok, tt.ok, tt.link, tt.key, tt.hrs)
			}
			if ok && (got.UserID != 7 || got.Kind != tt.n.Kind || !got.CreatedAt.Equal(hour(0))) {
				t.Errorf("got %+v: wrong user, kind or time", got)
			}
		})
	}
}
