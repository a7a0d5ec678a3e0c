package models

import (
	"context"
	"strconv"
	"time"
)

// Kinds of in-app notifications. The first three share their kind with the
// email they accompany; the others exist in the app only or come from the
// agent and the admin pages.
const (
	NotifyPreempted    = NoticePreempted
	NotifyDecision     = NoticeDecision
	NotifyFreed        = NoticeFreed
	NotifyIdle         = "idle_warning"
	NotifyOutOfService = "gpu_out_of_service"
)

// NotificationPageSize bounds the notifications page: older ones stay in
// the table but a person reads the recent ones.
const NotificationPageSize = 100

// Notification is one line in a person's in-app notification list. Its
// text is rendered when shown, in the reader's language, from Kind and
// Params, so that switching language also translates old notices.
type Notification struct {
	ID       int64
	UserID   int64
	Kind     string
	DedupKey string // like the outbox's: recording twice is a no-op
	// Link is where the notice takes its reader: the booking or request.
	Link      string
	Params    map[string]string
	CreatedAt time.Time
	ReadAt    *time.Time
}

// Unread reports whether the reader has not marked it read yet.
func (n Notification) Unread() bool { return n.ReadAt == nil }

// NotificationStore keeps the in-app notifications. Every query is scoped
// to one user, so that nobody reads or marks another's notices.
type NotificationStore interface {
	AddNotification(ctx context.Context, n Notification) error
	Notifications(ctx context.Context, userID int64, limit int) ([]Notification, error)
	UnreadNotifications(ctx context.Context, userID int64) (int, error)
	// NavState is what the navigation of every page shows, in one query.
	NavState(ctx context.Context, u *User, now time.Time) (NavState, error)
	MarkNotificationRead(ctx context.Context, userID, id int64, now time.Time) error
	MarkAllNotificationsRead(ctx context.Context, userID int64, now time.Time) (int, error)
}

// NavState is what every signed-in page's navigation needs: the requests
// the viewer may decide, their unread notices, and whether they lead a
// team (the Approvals tab shows for deciders only).
type NavState struct {
	PendingApprovals int
	UnreadNotices    int
	LeadsATeam       bool
}

// BookingLink is where a notice about booking id points: the owner's list
// with every booking shown, scrolled to that one.
func BookingLink(id int64) string {
	return "/bookings?show=all#booking-" + strconv.FormatInt(id, 10)
}

// NotificationFor turns an email notice into the in-app notice for its
// recipient, so that the store records both at the one place where it
// enqueues the email. ok is false for kinds that live only in email (the
// reminders, the leads' "a request waits").
func NotificationFor(n Notice, to *User, now time.Time) (Notification, bool) {
	out := Notification{UserID: to.ID, Kind: n.Kind, CreatedAt: now, Params: map[string]string{}}
	req := strconv.FormatInt(n.Request.ID, 10)
	switch {
	case n.Kind == NoticePreempted && n.Booking != nil && n.Preemption != nil:
		out.Params["Action"] = n.Preemption.Action
		out.Params["Hours"] = n.Preemption.LostGPUHours()
		out.Params["Request"] = req
		out.Params["Booking"] = strconv.FormatInt(n.Booking.ID, 10)
		out.Link = BookingLink(n.Booking.ID)
		out.DedupKey = "preempted:request:" + req + ":booking:" + out.Params["Booking"]
	case n.Kind == NoticeDecision:
		out.Params["Status"] = n.Request.Status
		out.Params["Request"] = req
		out.Link = "/requests/" + req
		out.DedupKey = "decided:request:" + req
	case n.Kind == NoticeFreed && n.Watch != nil:
		out.Params["GPU"] = n.Watch.Unit()
		out.Params["From"] = n.Watch.StartsAt.UTC().Format(time.RFC3339)
		out.Params["To"] = n.Watch.EndsAt.UTC().Format(time.RFC3339)
		out.Link = "/gpus/" + strconv.FormatInt(n.Watch.GPUID, 10)
		out.DedupKey = "freed:watch:" + strconv.FormatInt(n.Watch.ID, 10)
	default:
		return Notification{}, false
	}
	out.DedupKey += ":user:" + strconv.FormatInt(to.ID, 10)
	return out, true
}

// IdleNotification is the in-app twin of the idle-booking warning, once
// per idle episode (the agent's report id).
func IdleNotification(r IdleReport, autoRelease bool, now time.Time) Notification {
	return Notification{UserID: r.UserID, Kind: NotifyIdle, CreatedAt: now, Link: BookingLink(r.BookingID),
		DedupKey: "idle:report:" + strconv.FormatInt(r.ID, 10),
		Params: map[string]string{"Booking": strconv.FormatInt(r.BookingID, 10), "Node": r.NodeName,
			"Since": r.IdleSince.UTC().Format(time.RFC3339), "AutoRelease": strconv.FormatBool(autoRelease)}}
}
