package models

import (
	"context"
	"time"
)

// Kinds of the reminder and "it is free now" emails.
const (
	NoticeReminderStart = "reminder_start"
	NoticeReminderEnd   = "reminder_end"
	NoticeFreed         = "gpu_freed"
)

// ReminderLead is how long before a booking starts, and before it ends,
// its owner is reminded (unless they turned reminders off).
const ReminderLead = 15 * time.Minute

// MaxWatch bounds the range one can watch.
const MaxWatch = 60 * 24 * time.Hour

// Watch is "notify me when this frees": a user watches one GPU over a range
// and is told once, when no blocking booking is left in it.
type Watch struct {
	ID         int64
	UserID     int64
	GPUID      int64
	StartsAt   time.Time
	EndsAt     time.Time
	CreatedAt  time.Time
	NotifiedAt *time.Time
	// Filled by queries, for display and emails.
	GPUIndex int
	GPUName  string // UnitName: "GPU 3 · 1g.10gb" for a MIG instance
	NodeName string
}

// Unit names the watched GPU or MIG instance as the calendar does, with
// its node: "node-a GPU 3 · 1g.10gb".
func (w Watch) Unit() string {
	name := w.GPUName
	if name == "" {
		name = UnitName(GPU{Index: w.GPUIndex}, -1)
	}
	return w.NodeName + " " + name
}

// ValidateWatch checks a watch at now: a range that ends in the future,
// not longer than MaxWatch.
func ValidateWatch(w *Watch, now time.Time) error {
	fe := FieldErrors{}
	if w.GPUID <= 0 {
		fe.Add("gpu_ids", M("err.gpus_required"))
	}
	switch {
	case w.StartsAt.IsZero() || w.EndsAt.IsZero():
		fe.Add("ends_at", M("err.end_required"))
	case !w.EndsAt.After(w.StartsAt):
		fe.Add("ends_at", M("err.end_before_start"))
	case !w.EndsAt.After(now):
		fe.Add("ends_at", M("policy.err.watch_past"))
	case w.EndsAt.Sub(w.StartsAt) > MaxWatch:
		fe.Add("ends_at", M("err.range_too_long", "Days", int(MaxWatch/(24*time.Hour))))
	}
	return fe.Err()
}

// ReminderKind says which reminder, if any, a booking is due at now: its
// start or its end falls within the next ReminderLead.
func ReminderKind(b *Booking, now time.Time) string {
	soon := now.Add(ReminderLead)
	switch {
	case !b.Blocking():
		return ""
	case b.StartsAt.After(now) && !b.StartsAt.After(soon):
		return NoticeReminderStart
	case b.EndsAt.After(now) && !b.EndsAt.After(soon) && b.StartsAt.Before(now):
		return NoticeReminderEnd
	}
	return ""
}

// NoticeStore sends the emails that come from the clock rather than from a
// person's action: reminders and freed watches. Each run is idempotent
// (the outbox's dedup keys), so a job may run it as often as it likes.
type NoticeStore interface {
	SendReminders(ctx context.Context, now time.Time, mail Mailer) (int, error)
	CreateWatch(ctx context.Context, w *Watch, now time.Time, by Actor) error
	Watches(ctx context.Context, userID int64, now time.Time) ([]Watch, error)
	NotifyFreed(ctx context.Context, now time.Time, mail Mailer) (int, error)
	NotifyReminders(ctx context.Context, userID int64) (bool, error)
	SetNotifyReminders(ctx context.Context, userID int64, on bool, by Actor) error
}
