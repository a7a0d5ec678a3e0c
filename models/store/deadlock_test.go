package store_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// A booking whose transaction PostgreSQL aborts as a deadlock's victim is
// tried again, and refused with the booking in the way named, instead of
// failing as internal. Two bookings of one GPU inserted at the same
// instant deadlock this way on the exclusion constraint (each waits for
// the other's row), but only now and then; here the cycle is made on
// purpose: another transaction holds an uncommitted booking of the GPU,
// the create locks its user's row and waits for that booking, and the
// other transaction then asks for the same user's row. The create's
// backend is the one that finds the cycle and gives up.
func TestDeadlockVictimIsTriedAgainPostgres(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	u, node := fixture(t, db, 1)
	bo := &models.User{Email: "bo@example.org", Name: "Bo"}
	if err := db.CreateUser(ctx, bo, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	g := node.GPUs[0].ID
	now := time.Now()
	start := now.Add(time.Hour).Truncate(time.Minute)

	sqlDB, err := db.Gorm.DB()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	other, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	// Only the create may find the cycle: the other session waits ten
	// seconds before it looks (the tests connect as PostgreSQL's superuser,
	// who may set this), so that a slow poll cannot make it the victim.
	if _, err := other.ExecContext(ctx, `SET LOCAL deadlock_timeout = '10s'`); err != nil {
		t.Fatal(err)
	}
	var held int64
	err = other.QueryRowContext(ctx, `INSERT INTO bookings (user_id, node_id, starts_at, ends_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, bo.ID, node.ID, start, start.Add(2*time.Hour), now).Scan(&held)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(ctx, `INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at) VALUES ($1, $2, $3, $4)`,
		held, g, start, start.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}

	created := make(chan error, 1)
	go func() {
		_, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{g}, StartsAt: start.Add(time.Hour),
			EndsAt: start.Add(3 * time.Hour)}, models.DefaultBookingLimits, now, models.CLIActor)
		created <- err
	}()
	waitForLockWait(t, db)

	// The other transaction now waits for the create's lock on Ada's row:
	// a cycle. When PostgreSQL has aborted the create, it gets the row.
	if _, err := other.ExecContext(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, u.ID); err != nil {
		t.Fatal(err)
	}
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	err = <-created
	e := models.AsError(err)
	if e == nil || e.Code != models.ECONFLICT || len(e.Conflicts) != 1 || e.Conflicts[0].BookingID != held {
		t.Fatalf("create after the deadlock: %v (%+v), want a conflict naming booking %d", err, e, held)
	}
	if n, _ := db.Bookings(ctx, models.BookingFilter{GPUID: g, From: now, To: start.Add(24 * time.Hour)}); len(n) != 1 {
		t.Errorf("%d bookings on the GPU, want the other transaction's one", len(n))
	}
}

// waitForLockWait waits until a session of this test's database waits for
// a lock.
func waitForLockWait(t *testing.T, db *store.DB) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var n int64
		err := db.Gorm.Raw(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock'`).Scan(&n).Error
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("no session of this database waited for a lock")
}
