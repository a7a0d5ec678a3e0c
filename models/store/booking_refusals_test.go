package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestRefusalsLeaveNothingAndTheConnectionUsable: a booking or release
// the rules or the database refuse writes nothing, not even its audit
// event, and on PostgreSQL the pool's one connection serves the next
// booking and release: the same server process answers throughout, so
// none was dropped for being left in a transaction.
func TestRefusalsLeaveNothingAndTheConnectionUsable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		db.SetMaxConns(1)
		u, node := fixture(t, db, 2)
		v := &models.User{Email: "bob@example.org", Name: "Bob"}
		if err := db.CreateUser(ctx, v, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 1}}, at0, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		backend := backendPID(t, db)
		start, end := at0.Add(time.Hour), at0.Add(2*time.Hour)
		book := func(user *models.User, gpu int64) (*models.Booking, error) {
			return db.CreateBooking(ctx, models.NewBooking{UserID: user.ID, GPUIDs: []int64{gpu}, StartsAt: start, EndsAt: end},
				models.DefaultBookingLimits, at0, models.ActorFor(user, ""))
		}
		g0, g1 := node.GPUs[0].ID, node.GPUs[1].ID
		b, err := book(u, g0)
		if err != nil {
			t.Fatal(err)
		}

		_, err = book(u, g1) // a second GPU at once: over the limit
		wantCode(t, err, models.EPOLICY)
		_, err = book(v, g0) // taken
		wantCode(t, err, models.ECONFLICT)
		if ce, _ := err.(*models.Error); len(ce.Conflicts) != 1 || ce.Conflicts[0].BookingID != b.ID {
			t.Errorf("conflict names %+v, want booking %d", ce.Conflicts, b.ID)
		}
		_, err = book(u, 999999) // no such GPU
		wantCode(t, err, models.EINVALID)
		_, err = book(&models.User{ID: v.ID + 1000}, g1) // no such user
		wantCode(t, err, models.ENOTFOUND)
		_, err = db.ReleaseBooking(ctx, b.ID, v, start.Add(30*time.Minute)) // not Bob's
		wantCode(t, err, models.EFORBIDDEN)
		_, err = db.ReleaseBooking(ctx, b.ID+1000, u, start.Add(30*time.Minute))
		wantCode(t, err, models.ENOTFOUND)

		if n := countBookingWrites(t, db); n != [2]int{1, 1} {
			t.Errorf("bookings and booking events after the refusals = %v, want [1 1]", n)
		}
		if _, err := book(v, g1); err != nil {
			t.Fatalf("book after the refusals: %v", err)
		}
		got, err := db.ReleaseBooking(ctx, b.ID, u, start.Add(30*time.Minute))
		if err != nil {
			t.Fatalf("release after the refusals: %v", err)
		}
		if !got.EndsAt.Equal(start.Add(30 * time.Minute)) {
			t.Errorf("released booking ends %v, want %v", got.EndsAt, start.Add(30*time.Minute))
		}
		if n := countBookingWrites(t, db); n != [2]int{2, 3} {
			t.Errorf("bookings and booking events = %v, want [2 3]", n)
		}
		if got := backendPID(t, db); got != backend {
			t.Errorf("server process %d after the refusals, %d before: the connection was dropped", got, backend)
		}
	})
}

// TestConcurrentReleases: two releases of one booking at once: one
// releases it, the other finds it released (refused, nothing written).
func TestConcurrentReleases(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, node := fixture(t, db, 1)
		for round := range 5 {
			start := at0.Add(time.Duration(round) * 3 * time.Hour)
			b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID}, StartsAt: start, EndsAt: start.Add(2 * time.Hour)},
				models.DefaultBookingLimits, at0, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = db.ReleaseBooking(ctx, b.ID, u, start.Add(30*time.Minute))
				}()
			}
			wg.Wait()
			if (errs[0] == nil) == (errs[1] == nil) {
				t.Fatalf("round %d: releases answered %v and %v, want one to pass", round, errs[0], errs[1])
			}
			events, err := db.AuditEvents(ctx, models.AuditFilter{Action: models.AuditBookingRelease, TargetType: "booking", TargetID: itoa(b.ID)})
			if err != nil || len(events) != 1 {
				t.Fatalf("round %d: release events %d (%v), want 1", round, len(events), err)
			}
		}
	})
}

// countBookingWrites is the number of bookings (cancelled too) and of
// booking events.
func countBookingWrites(t *testing.T, db *store.DB) [2]int {
	t.Helper()
	bs, err := db.Bookings(ctx, models.BookingFilter{IncludeCancelled: true})
	if err != nil {
		t.Fatal(err)
	}
	events, err := db.AuditEvents(ctx, models.AuditFilter{Action: "booking."})
	if err != nil {
		t.Fatal(err)
	}
	return [2]int{len(bs), len(events)}
}

// backendPID is the PostgreSQL server process serving the pool's
// connection (0 on SQLite).
func backendPID(t *testing.T, db *store.DB) int {
	t.Helper()
	if db.Dialect != store.Postgres {
		return 0
	}
	var pid int
	if err := db.SQL.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}
