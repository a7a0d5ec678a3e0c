package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// TestBookingEventDetailsAsMap: the struct the booking and the release
// write their audit details with gives the same JSON, byte for byte, as
// the map auditBooking writes for the same event, by its owner and by an
// admin, released in its first second and later.
func TestBookingEventDetailsAsMap(t *testing.T) {
	start := time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC)
	end, now := start.Add(time.Hour), start.Add(20*time.Minute)
	b := &models.Booking{ID: 7, UserID: 3, GPUIDs: []int64{11, 12}, StartsAt: start, EndsAt: end}
	owner, admin := &models.User{ID: 3}, &models.User{ID: 9, IsAdmin: true}
	for _, tt := range []struct {
		name  string
		actor *models.User
		whole bool
	}{{"owner, later", owner, false}, {"owner, first second", owner, true}, {"admin, later", admin, false}, {"admin, first second", admin, true}} {
		t.Run(tt.name, func(t *testing.T) {
			d := newBookingEventDetails(tt.actor, b)
			m := map[string]any{"old_ends_at": end, "ends_at": now}
			d.OldEndsAt, d.EndsAt = &end, &now
			if tt.whole {
				m = map[string]any{"old_ends_at": end, "freed_whole_range": true}
				d.EndsAt, d.Freed = nil, true
			}
			got, _ := json.Marshal(d)
			want, _ := json.Marshal(bookingAuditDetails(tt.actor, b, m))
			if string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	t.Run("create", func(t *testing.T) {
		got, _ := json.Marshal(bookingEventDetails{GPUIDs: b.GPUIDs, StartsAt: start, EndsAt: &end, UserID: 3})
		want, _ := json.Marshal(map[string]any{"gpu_ids": b.GPUIDs, "starts_at": start, "ends_at": end, "user_id": int64(3)})
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}
