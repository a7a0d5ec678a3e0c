package models

import (
	"context"
	"strconv"
	"time"
)

// NotifyAccountDisabled tells a person who leaves the lab what became of
// their bookings, tokens and feeds; it goes by email (they can no longer
// sign in to read it in the app).
const NotifyAccountDisabled = "account_disabled"

// Disabled reports whether an admin deactivated the account: the person
// can no longer sign in or use a token, and their history stays.
func (u *User) Disabled() bool { return u != nil && u.DisabledAt != nil }

// Offboard is what deactivating an account does to its bookings: those not
// started yet are cancelled, a running one ends now. Ended ones stay as
// they are, so use and reports keep the person's history.
type Offboard struct {
	Cancel []Booking
	End    []Booking
}

// PlanOffboard sorts a user's bookings that still block GPUs at now into
// those to cancel and those to end; the rest are left alone.
func PlanOffboard(bookings []Booking, now time.Time) Offboard {
	var o Offboard
	for _, b := range bookings {
		switch {
		case b.Status == StatusCancelled || !b.EndsAt.After(now):
		case b.StartsAt.After(now) || b.StartsAt.Equal(now):
			o.Cancel = append(o.Cancel, b)
		default:
			o.End = append(o.End, b)
		}
	}
	return o
}

// OffboardResult counts what a deactivation did, for the admin's flash
// message, the CLI and the notice.
type OffboardResult struct {
	Cancelled, Ended, Tokens, Feeds int
	Requests                        int // pending priority requests withdrawn
}

// OffboardNotification is the notice (and its email) the deactivated
// person receives: what was cancelled, ended and revoked, once per
// deactivation.
func OffboardNotification(userID int64, r OffboardResult, now time.Time) Notification {
	return Notification{UserID: userID, Kind: NotifyAccountDisabled, CreatedAt: now, Link: "/bookings?show=all",
		DedupKey: "disabled:user:" + strconv.FormatInt(userID, 10) + ":" + strconv.FormatInt(now.Unix(), 10),
		Params: map[string]string{"Cancelled": strconv.Itoa(r.Cancelled), "Ended": strconv.Itoa(r.Ended),
			"Tokens": strconv.Itoa(r.Tokens), "Feeds": strconv.Itoa(r.Feeds)}}
}

// CheckDisable refuses what would leave the portal without a way in: an
// admin deactivating their own account.
func CheckDisable(target, by *User) error {
	if by != nil && target.ID == by.ID {
		return NewError(EINVALID, M("admin.err.self_disable"))
	}
	return nil
}

// RenameEmail checks a new address for u: a valid one, not the same.
// The caller's store refuses one that another account holds.
func RenameEmail(u *User, email string) (string, error) {
	email = NormalizeEmail(email)
	fe := FieldErrors{}
	switch {
	case email == "":
		fe.Add("email", M("err.email_required"))
	case !ValidEmail(email):
		fe.Add("email", M("err.email_invalid"))
	case email == u.Email:
		fe.Add("email", M("admin.err.same_email"))
	}
	return email, fe.Err()
}

// UserLifecycleStore deactivates, reactivates and renames accounts, each
// in one transaction with its audit event. mail renders the notice's
// email; nil sends none.
type UserLifecycleStore interface {
	DisableUser(ctx context.Context, userID int64, by Actor, now time.Time, mail NotificationMailer) (OffboardResult, error)
	EnableUser(ctx context.Context, userID int64, by Actor, now time.Time) error
	RenameUser(ctx context.Context, userID int64, email string, by Actor, now time.Time) error
}
