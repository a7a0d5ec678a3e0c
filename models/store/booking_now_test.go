package store_test

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
)

// usageWrites counts the statements that write the usage tables, so that a
// test can see whether a booking change restamped minutes.
func usageWrites(t *testing.T, db *store.DB) func() int {
	t.Helper()
	var mu sync.Mutex
	n := 0
	count := func(tx *gorm.DB) {
		if q := tx.Statement.SQL.String(); strings.Contains(q, "UPDATE gpu_usage_minutes") || strings.Contains(q, "UPDATE gpu_user_usage_minutes") {
			mu.Lock()
			n++
			mu.Unlock()
		}
	}
	name := "count_usage_writes_" + strings.ReplaceAll(t.Name(), "/", "_")
	if err := db.Gorm.Callback().Raw().After("gorm:raw").Register(name, count); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Gorm.Callback().Raw().Remove(name) })
	return func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestBookNowAndReleaseWithoutStoredUsage: booking from now and releasing
// it touch the present, where the agents have normally stored nothing yet
// (they report a minute after it ends); neither then rewrites any usage
// row. The release answers the booking as committed, as a read gives it.
// Minutes that are stored are restamped: TestUsageStampsFollowBookings.
func TestBookNowAndReleaseWithoutStoredUsage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		n1, _ := enrolled(t, db, "gpu31", 1, 2)
		node, err := db.Node(ctx, n1)
		if err != nil {
			t.Fatal(err)
		}
		// Minutes stored before now on GPU 0: outside the range touched.
		if _, err := telemetry.New(db).IngestUsage(ctx, n1, usageBatch(1, at0.Add(-10*time.Minute), 5, 1), 0, at0); err != nil {
			t.Fatal(err)
		}
		writes := usageWrites(t, db)
		now := at0.Add(1500 * time.Millisecond)
		b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID}, StartsAt: at0, EndsAt: at0.Add(time.Hour)},
			models.DefaultBookingLimits, now, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.ReleaseBooking(ctx, b.ID, u, now.Add(3*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if n := writes(); n != 0 {
			t.Errorf("book now and release wrote the usage tables %d times, want 0", n)
		}
		want, err := db.Booking(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		got.CreatedAt, want.CreatedAt = got.CreatedAt.UTC(), want.CreatedAt.UTC()
		if !reflect.DeepEqual(normal(got), normal(want)) {
			t.Errorf("release returned %+v, a read gives %+v", *got, *want)
		}
	})
}

// normal puts a booking's times in UTC, so that two reads compare equal
// whatever zone each database's driver returns.
func normal(b *models.Booking) models.Booking {
	c := *b
	c.StartsAt, c.EndsAt, c.CreatedAt, c.UpdatedAt = c.StartsAt.UTC(), c.EndsAt.UTC(), c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	if c.ReleasedAt != nil {
		r := c.ReleasedAt.UTC()
		c.ReleasedAt = &r
	}
	return c
}
