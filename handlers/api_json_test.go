package handlers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// Every time on the wire is UTC and an empty ID list is [], for bookings
// and priority requests alike.
func TestWireTimesUTC(t *testing.T) {
	cst := time.FixedZone("CST", 8*3600)
	at := time.Date(2026, 6, 3, 18, 0, 0, 0, cst)
	t.Run("request", func(t *testing.T) {
		got, err := json.Marshal(toRequestJSON(&models.PriorityRequest{StartsAt: at, EndsAt: at, CreatedAt: at, DecidedAt: &at}))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			GPUIDs    []int64 `json:"gpu_ids"`
			DecidedAt string  `json:"decided_at"`
		}
		if err := json.Unmarshal(got, &body); err != nil {
			t.Fatal(err)
		}
		if want := "2026-06-03T10:00:00Z"; body.DecidedAt != want {
			t.Errorf("decided_at = %q, want %q", body.DecidedAt, want)
		}
		if body.GPUIDs == nil {
			t.Errorf("gpu_ids = null, want []")
		}
	})
	t.Run("booking", func(t *testing.T) {
		b := toBookingJSON(&models.Booking{StartsAt: at, EndsAt: at, ReleasedAt: &at}, at, nil)
		if got, want := b.ReleasedAt.Format(time.RFC3339), "2026-06-03T10:00:00Z"; got != want {
			t.Errorf("released_at = %q, want %q", got, want)
		}
		if b.GPUIDs == nil || b.GPUUUIDs == nil {
			t.Errorf("gpu_ids = %v, gpu_uuids = %v, want [] each", b.GPUIDs, b.GPUUUIDs)
		}
	})
	t.Run("booking GPU UUIDs in the order of its GPU IDs", func(t *testing.T) {
		b := toBookingJSON(&models.Booking{GPUIDs: []int64{7, 3}}, at, map[int64]string{3: "GPU-c", 7: "GPU-g"})
		if got, want := strings.Join(b.GPUUUIDs, ","), "GPU-g,GPU-c"; got != want {
			t.Errorf("gpu_uuids = %s, want %s", got, want)
		}
	})
}
