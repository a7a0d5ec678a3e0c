package store_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// changeClock is the fixed "now" of the booking change tests: a whole hour,
// with bookings made relative to it.
var changeClock = time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC)

type changeFixture struct {
	db                  *store.DB
	owner, other, admin *models.User
	node                *models.Node
}

func newChangeFixture(t *testing.T, db *store.DB) changeFixture {
	t.Helper()
	owner, node := fixture(t, db, 4)
	other := &models.User{Email: "bob@example.org", Name: "Bob"}
	admin := &models.User{Email: "root@example.org", Name: "Root", IsAdmin: true}
	for _, u := range []*models.User{other, admin} {
		if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
			t.Fatalf("create user: %v", err)
		}
	}
	return changeFixture{db: db, owner: owner, other: other, admin: admin, node: node}
}

// book makes a booking on GPUs (by index) from start to end hours after changeClock,
// created at a "now" before it so that past bookings can be made too.
func (f changeFixture) book(t *testing.T, u *models.User, idx []int, start, end float64) *models.Booking {
	t.Helper()
	ids := make([]int64, len(idx))
	for i, x := range idx {
		ids[i] = f.node.GPUs[x].ID
	}
	s := changeClock.Add(time.Duration(start * float64(time.Hour)))
	e := changeClock.Add(time.Duration(end * float64(time.Hour)))
	created := s.Add(-time.Hour)
	b, err := f.db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: ids, StartsAt: s, EndsAt: e, Note: "n"},
		models.DefaultBookingLimits, created, models.ActorFor(u, ""))
	if err != nil {
		t.Fatalf("create booking: %v", err)
	}
	return b
}

func hours(h float64) time.Time { return changeClock.Add(time.Duration(h * float64(time.Hour))) }

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := models.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// blockingRows reads booking_gpus for a booking, to check it stays in sync.
func blockingRows(t *testing.T, db *store.DB, id int64) []struct {
	StartsAt, EndsAt time.Time
	Blocking         bool
} {
	t.Helper()
	var rows []struct {
		StartsAt, EndsAt time.Time
		Blocking         bool
	}
	if err := db.Gorm.Table("booking_gpus").Select("starts_at, ends_at, blocking").Where("booking_id = ?", id).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

func lastAudit(t *testing.T, db *store.DB, action string) models.AuditEvent {
	t.Helper()
	evs, err := db.AuditEvents(ctx, models.AuditFilter{Action: action, Limit: 1})
	if err != nil || len(evs) != 1 {
		t.Fatalf("audit %s: %v, %d events", action, err, len(evs))
	}
	return evs[0]
}

func TestCancelBooking(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newChangeFixture(t, db)
		b := f.book(t, f.owner, []int{0, 1}, 1, 3)
		_, err := db.CancelBooking(ctx, b.ID, f.other, changeClock)
		wantCode(t, err, models.EFORBIDDEN)
		_, err = db.CancelBooking(ctx, 999999, f.owner, changeClock)
		wantCode(t, err, models.ENOTFOUND)
		_, err = db.CancelBooking(ctx, b.ID, f.owner, hours(1.5))
		wantCode(t, err, models.EINVALID)

		got, err := db.CancelBooking(ctx, b.ID, f.owner, changeClock)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != models.StatusCancelled || !got.StartsAt.Equal(hours(1)) || !got.EndsAt.Equal(hours(3)) || len(got.GPUIDs) != 2 {
			t.Errorf("cancelled = %+v", got)
		}
		for _, r := range blockingRows(t, db, b.ID) {
			if r.Blocking {
				t.Errorf("booking_gpus still blocking after cancel")
			}
		}
		_, err = db.CancelBooking(ctx, b.ID, f.owner, changeClock)
		wantCode(t, err, models.EINVALID)
		ev := lastAudit(t, db, models.AuditBookingCancel)
		if ev.ActorID == nil || *ev.ActorID != f.owner.ID || ev.TargetID != itoa(b.ID) {
			t.Errorf("audit = %+v", ev)
		}
		// The range is free again.
		f.book(t, f.other, []int{0}, 1, 3)
	})
}

func TestReleaseBooking(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newChangeFixture(t, db)
		b := f.book(t, f.owner, []int{2}, 1, 5)
		_, err := db.ReleaseBooking(ctx, b.ID, f.owner, changeClock)
		wantCode(t, err, models.EINVALID) // not started: cancel instead
		_, err = db.ReleaseBooking(ctx, b.ID, f.other, hours(2))
		wantCode(t, err, models.EFORBIDDEN)

		now := hours(2).Add(1500 * time.Millisecond)
		got, err := db.ReleaseBooking(ctx, b.ID, f.admin, now)
		if err != nil {
			t.Fatal(err)
		}
		want := hours(2).Add(time.Second)
		if !got.EndsAt.Equal(want) || got.ReleasedAt == nil || !got.ReleasedAt.Equal(want) || got.Status != models.StatusConfirmed {
			t.Errorf("released = %+v, want end %v", got, want)
		}
		for _, r := range blockingRows(t, db, b.ID) {
			if !r.EndsAt.UTC().Equal(want) || !r.Blocking {
				t.Errorf("booking_gpus = %+v, want end %v", r, want)
			}
		}
		ev := lastAudit(t, db, models.AuditBookingRelease)
		if ev.ActorID == nil || *ev.ActorID != f.admin.ID || !contains(ev.Details, `"user_id":`+itoa(f.owner.ID)) {
			t.Errorf("admin release audit = %+v", ev)
		}
		_, err = db.ReleaseBooking(ctx, b.ID, f.owner, hours(3))
		wantCode(t, err, models.EINVALID) // past now
		// Someone else can book the freed time at once.
		f.book(t, f.other, []int{2}, 2.5, 4)
	})
}

// TestReleaseInTheFirstSecond: booked now and released in the same second,
// the GPU can be booked again from that same second (a one-second stub used
// to refuse it).
func TestReleaseInTheFirstSecond(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newChangeFixture(t, db)
		gpu := []int64{f.node.GPUs[1].ID}
		start := changeClock.Add(5 * time.Hour)
		first, err := db.CreateBooking(ctx, models.NewBooking{UserID: f.owner.ID, GPUIDs: gpu, StartsAt: start, EndsAt: start.Add(time.Hour)},
			models.DefaultBookingLimits, start, models.ActorFor(f.owner, ""))
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.ReleaseBooking(ctx, first.ID, f.owner, start.Add(400*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != models.StatusCancelled || got.ReleasedAt == nil {
			t.Errorf("released in its first second = %+v, want cancelled with released_at", got)
		}
		for _, r := range blockingRows(t, db, first.ID) {
			if r.Blocking {
				t.Errorf("booking_gpus still blocking: %+v", r)
			}
		}
		if ev := lastAudit(t, db, models.AuditBookingRelease); !contains(ev.Details, `"freed_whole_range":true`) {
			t.Errorf("audit = %+v", ev)
		}
		again, err := db.CreateBooking(ctx, models.NewBooking{UserID: f.other.ID, GPUIDs: gpu, StartsAt: start, EndsAt: start.Add(time.Hour)},
			models.DefaultBookingLimits, start.Add(800*time.Millisecond), models.ActorFor(f.other, ""))
		if err != nil || again.StartsAt.Unix() != start.Unix() {
			t.Fatalf("booking the same second again: %+v, %v", again, err)
		}
	})
}

func TestExtendBooking(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newChangeFixture(t, db)
		lim := models.DefaultBookingLimits
		b := f.book(t, f.owner, []int{0, 1}, 1, 3)
		f.book(t, f.other, []int{1}, 5, 6)

		got, err := db.ExtendBooking(ctx, b.ID, f.owner, hours(4), lim, hours(2))
		if err != nil {
			t.Fatal(err)
		}
		if !got.EndsAt.Equal(hours(4)) || !got.StartsAt.Equal(hours(1)) {
			t.Errorf("extended = %v..%v", got.StartsAt, got.EndsAt)
		}
		for _, r := range blockingRows(t, db, b.ID) {
			if !r.EndsAt.UTC().Equal(hours(4)) {
				t.Errorf("booking_gpus end = %v", r.EndsAt)
			}
		}
		_, err = db.ExtendBooking(ctx, b.ID, f.owner, hours(7), lim, hours(2))
		wantCode(t, err, models.ECONFLICT)
		e := models.AsError(err)
		if fu, _ := e.Msg.Data["FreeUntil"].(time.Time); !fu.Equal(hours(5)) || len(e.Conflicts) != 1 || e.Msg.Key != "err.extend_conflict" {
			t.Errorf("conflict = %+v", e)
		}
		_, err = db.ExtendBooking(ctx, b.ID, f.owner, hours(3.5), lim, hours(2))
		wantCode(t, err, models.EINVALID) // not later
		_, err = db.ExtendBooking(ctx, b.ID, f.other, hours(4.5), lim, hours(2))
		wantCode(t, err, models.EFORBIDDEN)
		_, err = db.ExtendBooking(ctx, b.ID, f.owner, hours(4.5), lim, hours(4.5))
		wantCode(t, err, models.EINVALID) // past
		if got := lastAudit(t, db, models.AuditBookingExtend); !contains(got.Details, "old_ends_at") {
			t.Errorf("extend audit = %+v", got)
		}
	})
}

func TestUpdateBookingNote(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newChangeFixture(t, db)
		lim := models.DefaultBookingLimits
		now := time.Now().UTC()
		b, err := db.CreateBooking(ctx, models.NewBooking{UserID: f.owner.ID, GPUIDs: []int64{f.node.GPUs[3].ID},
			StartsAt: now.Add(time.Hour), EndsAt: now.Add(2 * time.Hour)}, lim, now, models.ActorFor(f.owner, ""))
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.UpdateBookingNote(ctx, b.ID, f.owner, "  training run 7 ", lim, now)
		if err != nil || got.Note != "training run 7" {
			t.Fatalf("note = %q, %v", got.Note, err)
		}
		_, err = db.UpdateBookingNote(ctx, b.ID, f.other, "mine now", lim, now)
		wantCode(t, err, models.EFORBIDDEN)
		past, err := db.CreateBooking(ctx, models.NewBooking{UserID: f.owner.ID, GPUIDs: []int64{f.node.GPUs[3].ID},
			StartsAt: now.Add(-3 * time.Hour), EndsAt: now.Add(-2 * time.Hour)}, lim, now.Add(-4*time.Hour), models.ActorFor(f.owner, ""))
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.UpdateBookingNote(ctx, past.ID, f.owner, "rewrite history", lim, now)
		wantCode(t, err, models.EINVALID)
		// The rule is asked at the clock given, not the wall clock's.
		if got, err := db.UpdateBookingNote(ctx, past.ID, f.owner, "before it ran", lim, now.Add(-150*time.Minute)); err != nil || got.Note != "before it ran" {
			t.Fatalf("note at an earlier clock = %+v, %v", got, err)
		}
		lastAudit(t, db, models.AuditBookingEditNote)
	})
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
