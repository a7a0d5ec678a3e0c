package store_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// BenchmarkCreateBookingHistory books one GPU that already has 5,000 past
// bookings, on SQLite with the overlap triggers of 00001 (a walk of the
// GPU's history per insert) and of 00008 (the future only):
//
//	go test -run '^$' -bench CreateBookingHistory ./models/store/
func BenchmarkCreateBookingHistory(b *testing.B) {
	db := storetest.Open(b, store.SQLite)
	u, node := fixture(b, db, 1)
	lim := models.BookingLimits{MaxGPUCount: 8, MaxLength: 1000 * time.Hour, MaxAhead: 1e6 * time.Hour, MaxNoteLen: 100}
	base := time.Now().UTC().Truncate(time.Hour).Add(-24 * 365 * time.Hour)
	k := 0
	book := func(b *testing.B) {
		s := base.Add(time.Duration(k) * time.Hour)
		k++
		req := models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID}, StartsAt: s, EndsAt: s.Add(time.Hour)}
		if _, err := db.CreateBooking(ctx, req, lim, base.Add(-time.Hour), models.CLIActor); err != nil {
			b.Fatal(err)
		}
	}
	for range 5000 {
		book(b)
	}
	b.Run("trigger=00001", func(b *testing.B) {
		if _, err := db.MigrateDownOne(ctx); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			book(b)
		}
	})
	b.Run("trigger=00008", func(b *testing.B) {
		if _, err := db.MigrateUp(ctx); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			book(b)
		}
	})
}

// BenchmarkBookNowAndRelease is the store's part of what users do most:
// book one GPU from now for an hour, then release it, users taking turns
// (as the peer benchmark's clients do), on each database:
//
//	go test -run '^$' -bench BookNowAndRelease ./models/store/
func BenchmarkBookNowAndRelease(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			db := storetest.Open(b, d)
			first, node := fixture(b, db, 4)
			users := []*models.User{first}
			for _, name := range []string{"Bob", "Cy", "Di"} {
				u := &models.User{Email: name + "@example.org", Name: name}
				if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
					b.Fatal(err)
				}
				users = append(users, u)
			}
			lim := models.BookingLimits{MaxGPUCount: 8, MaxLength: 24 * time.Hour, MaxAhead: 24 * time.Hour, MaxNoteLen: 100}
			i := 0
			for b.Loop() {
				u, g := users[i%len(users)], node.GPUs[i%len(node.GPUs)]
				i++
				now := time.Now().Truncate(time.Second)
				bk, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{g.ID}, StartsAt: now, EndsAt: now.Add(time.Hour)}, lim, now, models.ActorFor(u, "127.0.0.1"))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := db.ReleaseBooking(ctx, bk.ID, u, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
