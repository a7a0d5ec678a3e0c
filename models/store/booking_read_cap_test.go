package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestBookingsReadWholeOrRefused: a read of every booking in a range
// returns all of them up to models.MaxBookingsRead (a lab that large reads
// a day of them for its home page) and refuses a range that holds more,
// rather than answering with the first ones (which showed booked GPUs as
// free); a read with a Limit still gets its first bookings.
func TestBookingsReadWholeOrRefused(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := &reportFixture{t: t, db: db}
		ada := f.user("ada")
		f.node(1)
		from := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		// MaxBookingsRead + 1 bookings of one minute each, all in one hour
		// (the range's overlap is what counts, not the GPUs).
		f.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i <= ?)
			INSERT INTO bookings (user_id, node_id, starts_at, ends_at, status, created_at, updated_at)
			SELECT ?, (SELECT MIN(id) FROM nodes), ?, ?, ?, ?, ? FROM s`,
			models.MaxBookingsRead, ada, from, from.Add(time.Minute), models.StatusConfirmed, from, from)
		hour := models.BookingFilter{From: from, To: from.Add(time.Hour)}
		_, err := db.Bookings(ctx, hour)
		var e *models.Error
		if !errors.As(err, &e) || e.Msg.Key != "err.too_many_bookings" {
			t.Fatalf("a range of %d bookings: %v, want err.too_many_bookings", models.MaxBookingsRead+1, err)
		}
		first := hour
		first.Limit = 5
		if bs, err := db.Bookings(ctx, first); err != nil || len(bs) != 5 {
			t.Fatalf("the first 5: %d bookings, %v", len(bs), err)
		}
		f.exec("DELETE FROM bookings WHERE id = (SELECT MAX(id) FROM bookings)")
		bs, err := db.Bookings(ctx, hour)
		if err != nil || len(bs) != models.MaxBookingsRead {
			t.Fatalf("a range of exactly %d bookings: %d, %v", models.MaxBookingsRead, len(bs), err)
		}
	})
}
