package store_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func recordingMailer(sent *[]models.Notice) models.Mailer {
	return func(n models.Notice, to *models.User) (models.OutboxMessage, error) {
		*sent = append(*sent, n)
		return models.OutboxMessage{Kind: n.Kind, ToEmail: to.Email, Subject: n.Kind, TextBody: "t"}, nil
	}
}

func TestReminders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newChangeFixture(t, db)
		starting := f.book(t, f.owner, []int{0}, 1.1, 3) // starts in 6 minutes after hours(1)
		ending := f.book(t, f.other, []int{1}, 0, 1.2)   // ends in 12 minutes
		f.book(t, f.owner, []int{2}, 2, 3)               // nothing due
		quiet := f.book(t, f.admin, []int{3}, 1.1, 2)    // its owner turned reminders off
		if err := db.SetNotifyReminders(ctx, f.admin.ID, false, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if on, err := db.NotifyReminders(ctx, f.admin.ID); err != nil || on {
			t.Fatalf("reminders still on (%v)", err)
		}
		var sent []models.Notice
		n, err := db.SendReminders(ctx, hours(1), recordingMailer(&sent))
		if err != nil || n != 2 {
			t.Fatalf("sent %d, %v; want 2", n, err)
		}
		got := map[int64]string{}
		for _, s := range sent {
			got[s.Booking.ID] = s.Kind
		}
		if got[starting.ID] != models.NoticeReminderStart || got[ending.ID] != models.NoticeReminderEnd || got[quiet.ID] != "" {
			t.Errorf("reminders = %v", got)
		}
		booked := map[int64]*models.Booking{starting.ID: starting, ending.ID: ending}
		for _, s := range sent {
			if b := booked[s.Booking.ID]; b == nil || !slices.Equal(s.Booking.GPUIDs, b.GPUIDs) || s.Booking.UserEmail != b.UserEmail {
				t.Errorf("reminder of booking %d: GPUs %v, owner %q; want %+v", s.Booking.ID, s.Booking.GPUIDs, s.Booking.UserEmail, b)
			}
		}
		var to []string
		if err := db.Gorm.Table("outbox").Where("kind LIKE 'reminder_%'").Order("to_email").Pluck("to_email", &to).Error; err != nil {
			t.Fatal(err)
		}
		want := []string{f.other.Email, f.owner.Email}
		slices.Sort(want)
		if !slices.Equal(to, want) {
			t.Errorf("reminders went to %v, want %v", to, want)
		}
		// A second run in the same window queues nothing new.
		if _, err := db.SendReminders(ctx, hours(1.02), recordingMailer(&sent)); err != nil {
			t.Fatal(err)
		}
		var queued int64
		db.Gorm.Table("outbox").Where("kind LIKE 'reminder_%'").Count(&queued)
		if queued != 2 {
			t.Errorf("outbox has %d reminders, want 2", queued)
		}
	})
}

func TestWatchFreed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newChangeFixture(t, db)
		b := f.book(t, f.other, []int{0}, 2, 4)
		w := &models.Watch{UserID: f.owner.ID, GPUID: f.node.GPUs[0].ID, StartsAt: hours(2), EndsAt: hours(3)}
		if err := db.CreateWatch(ctx, w, changeClock, models.ActorFor(f.owner, "")); err != nil {
			t.Fatal(err)
		}
		wantCode(t, db.CreateWatch(ctx, &models.Watch{UserID: f.owner.ID, GPUID: w.GPUID, StartsAt: hours(-3), EndsAt: hours(-2)}, changeClock, models.CLIActor), models.EINVALID)
		var sent []models.Notice
		if n, err := db.NotifyFreed(ctx, changeClock, recordingMailer(&sent)); err != nil || n != 0 {
			t.Fatalf("notified %d while booked, %v", n, err)
		}
		if _, err := db.CancelBooking(ctx, b.ID, f.other, changeClock); err != nil {
			t.Fatal(err)
		}
		if n, err := db.NotifyFreed(ctx, changeClock.Add(time.Minute), recordingMailer(&sent)); err != nil || n != 1 {
			t.Fatalf("notified %d after the cancel, %v", n, err)
		}
		if len(sent) != 1 || sent[0].Kind != models.NoticeFreed || sent[0].Watch.NodeName != "gpu01" {
			t.Errorf("notices = %+v", sent)
		}
		if n, err := db.NotifyFreed(ctx, changeClock.Add(2*time.Minute), recordingMailer(&sent)); err != nil || n != 0 {
			t.Errorf("notified again: %d, %v", n, err)
		}
		ws, err := db.Watches(ctx, f.owner.ID, changeClock)
		if err != nil || len(ws) != 1 || ws[0].NotifiedAt == nil {
			t.Errorf("watches = %+v, %v", ws, err)
		}
		// The watcher is told in the app too, once, and without SMTP.
		if unread, err := db.UnreadNotifications(ctx, f.owner.ID); err != nil || unread != 1 {
			t.Errorf("unread in-app notices = %d, %v; want 1", unread, err)
		}
		notes, _ := db.Notifications(ctx, f.owner.ID, 0)
		if len(notes) != 1 || notes[0].Kind != models.NotifyFreed || notes[0].Link != "/gpus/"+strconv.FormatInt(w.GPUID, 10) ||
			notes[0].Params["GPU"] != "gpu01 GPU 0" {
			t.Errorf("in-app notices = %+v", notes)
		}
	})
}

// TestWatchFreedMailFails: a notice that cannot be rendered rolls its watch
// back, and NotifyFreed counts only what committed.
func TestWatchFreedMailFails(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newChangeFixture(t, db)
		w := &models.Watch{UserID: f.owner.ID, GPUID: f.node.GPUs[0].ID, StartsAt: hours(2), EndsAt: hours(3)}
		if err := db.CreateWatch(ctx, w, changeClock, models.ActorFor(f.owner, "")); err != nil {
			t.Fatal(err)
		}
		broken := func(models.Notice, *models.User) (models.OutboxMessage, error) {
			return models.OutboxMessage{}, errors.New("template broke")
		}
		if n, err := db.NotifyFreed(ctx, changeClock, broken); err == nil || n != 0 {
			t.Errorf("NotifyFreed = %d, %v; want 0 and an error", n, err)
		}
		ws, err := db.Watches(ctx, f.owner.ID, changeClock)
		if err != nil || len(ws) != 1 || ws[0].NotifiedAt != nil {
			t.Errorf("watches = %+v, %v; want one, not notified", ws, err)
		}
	})
}
