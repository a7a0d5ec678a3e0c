package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// oldText is how the earlier SQLite driver (glebarez/go-sqlite, up to the
// change of driver) wrote a UTC time: checked on a database it wrote
// (`gpubook demo`), e.g. bookings.starts_at = '2026-12-03 05:00:00+00:00'.
const oldText = "2006-01-02 15:04:05-07:00"

// TestSQLiteReadsEarlierDriversDatabase: a gpubook.db written by the earlier
// driver must keep working. Its times are read as the same instants; new
// rows are written in the same text, because SQLite compares times as text
// (the overlap triggers and every range query do); and a booking that
// overlaps one written by the earlier driver is still refused.
func TestSQLiteReadsEarlierDriversDatabase(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	u, node := fixture(t, db, 1)
	g := node.GPUs[0].ID
	start := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	end, created := start.Add(2*time.Hour), start.Add(-24*time.Hour)
	if err := db.Gorm.Exec(`INSERT INTO bookings (id, user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
		VALUES (500, ?, ?, ?, ?, 'old', 'standard', 'confirmed', ?, ?)`, u.ID, node.ID,
		start.Format(oldText), end.Format(oldText), created.Format(oldText), created.Format(oldText)).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Gorm.Exec(`INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking) VALUES (500, ?, ?, ?, TRUE)`,
		g, start.Format(oldText), end.Format(oldText)).Error; err != nil {
		t.Fatal(err)
	}

	got, err := db.Booking(ctx, 500)
	if err != nil {
		t.Fatal(err)
	}
	if !got.StartsAt.Equal(start) || !got.EndsAt.Equal(end) || !got.CreatedAt.Equal(created) || got.Note != "old" || len(got.GPUIDs) != 1 || got.GPUIDs[0] != g {
		t.Errorf("old booking read as %v–%v created %v, %q, GPUs %v; want %v–%v created %v", got.StartsAt, got.EndsAt, got.CreatedAt, got.Note, got.GPUIDs, start, end, created)
	}
	listed, err := db.Bookings(ctx, models.BookingFilter{GPUID: g, From: start.Add(time.Hour), To: start.Add(90 * time.Minute)})
	if err != nil || len(listed) != 1 || listed[0].ID != 500 {
		t.Errorf("range query over the old booking: %+v, %v", listed, err)
	}

	now := created
	book := func(s, e time.Time) (*models.Booking, error) {
		return db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{g}, StartsAt: s, EndsAt: e},
			models.DefaultBookingLimits, now, models.CLIActor)
	}
	if _, err := book(start.Add(time.Hour), end.Add(time.Hour)); models.ErrorCode(err) != models.ECONFLICT {
		t.Errorf("booking over the old one: got %v, want a conflict", err)
	}
	b, err := book(end, end.Add(time.Hour))
	if err != nil {
		t.Fatalf("booking right after the old one: %v", err)
	}
	var starts, gpuStarts, createdAt string
	if err := db.SQL.QueryRowContext(ctx, `SELECT b.starts_at || '', g.starts_at || '', b.created_at || ''
		FROM bookings b JOIN booking_gpus g ON g.booking_id = b.id WHERE b.id = ?`, b.ID).Scan(&starts, &gpuStarts, &createdAt); err != nil {
		t.Fatal(err)
	}
	if want := end.Format(oldText); starts != want || gpuStarts != want || createdAt != now.Format(oldText) {
		t.Errorf("new booking stored as %q, %q, created %q; want %q, %q, created %q (the earlier driver's text)",
			starts, gpuStarts, createdAt, want, want, now.Format(oldText))
	}
}

// TestSQLiteConnectionSettings checks what the DSN asks of every
// connection, so that a change of driver that ignores a parameter fails
// here: foreign keys, WAL, the busy timeout, synchronous=NORMAL, and
// transactions that take the write lock at BEGIN (BEGIN IMMEDIATE), which
// the booking's check-then-insert relies on.
func TestSQLiteConnectionSettings(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	for _, c := range []struct{ pragma, want string }{
		{"foreign_keys", "1"}, {"journal_mode", "wal"}, {"busy_timeout", "10000"}, {"synchronous", "1"},
	} {
		var got string
		if err := db.SQL.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil || got != c.want {
			t.Errorf("PRAGMA %s = %q, %v; want %q", c.pragma, got, err, c.want)
		}
	}

	other, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	defer other.ExecContext(ctx, "PRAGMA busy_timeout = 10000")
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The transaction has run no statement: only BEGIN IMMEDIATE holds the lock now.
	_, err = other.ExecContext(ctx, "BEGIN IMMEDIATE")
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("a second writer while a transaction is open: got %v, want database is locked", err)
		other.ExecContext(ctx, "ROLLBACK")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Errorf("a writer after the rollback: %v", err)
	}
	other.ExecContext(ctx, "ROLLBACK")
}
