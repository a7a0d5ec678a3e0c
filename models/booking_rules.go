package models

import (
	"time"
)

// The rules below decide whether a change to an existing booking is allowed
// at now. They keep the record people later argue from intact (a booking
// edited after the fact is what starts the quarrels): the past is read-only, an active booking's start never moves, and
// an active booking can only be extended or ended.

// CheckCancel allows cancelling a booking that has not started yet. Once it
// has started, releasing it is the honest way to give the GPUs back.
func CheckCancel(b *Booking, actor *User, now time.Time) error {
	if err := checkChange(b, actor); err != nil {
		return err
	}
	switch b.Phase(now) {
	case PhaseUpcoming:
		return nil
	case PhaseActive:
		return NewError(EINVALID, M("err.booking_started_release"))
	default:
		return phaseError(b, now)
	}
}

// CheckRelease allows ending an active booking now. An upcoming booking has
// nothing to release: it is cancelled instead, so that it leaves no record of
// use that never happened.
func CheckRelease(b *Booking, actor *User, now time.Time) error {
	if err := checkChange(b, actor); err != nil {
		return err
	}
	switch b.Phase(now) {
	case PhaseActive:
		if !now.After(b.StartsAt) {
			return NewError(EINVALID, M("err.booking_not_started_cancel"))
		}
		return nil
	case PhaseUpcoming:
		return NewError(EINVALID, M("err.booking_not_started_cancel"))
	default:
		return phaseError(b, now)
	}
}

// ReleaseEnd is the end a booking released at now gets: now in whole
// seconds (what the store keeps). whole is true when that is not after the
// start, i.e. the booking is released within its first second: then it
// held nothing worth keeping and the whole range must be free again at
// once, so the store cancels it instead of keeping a one-second stub that
// would refuse a booking made in the same second.
func ReleaseEnd(b *Booking, now time.Time) (end time.Time, whole bool) {
	end = now.UTC().Truncate(time.Second)
	if !end.After(b.StartsAt) {
		return b.StartsAt.UTC(), true
	}
	return end, false
}

// CheckExtend allows moving the end of an upcoming or active booking later,
// within the longest booking allowed. It returns the new end as stored (UTC,
// whole seconds). Whether the GPUs are free is the store's question.
func CheckExtend(b *Booking, actor *User, newEnd time.Time, lim BookingLimits, now time.Time) (time.Time, error) {
	if err := checkChange(b, actor); err != nil {
		return time.Time{}, err
	}
	if p := b.Phase(now); p != PhaseUpcoming && p != PhaseActive {
		return time.Time{}, phaseError(b, now)
	}
	fe := FieldErrors{}
	end := newEnd.UTC().Truncate(time.Second)
	switch {
	case newEnd.IsZero():
		fe.Add("ends_at", M("err.end_required"))
	case !end.After(b.EndsAt):
		fe.Add("ends_at", M("err.extend_not_later"))
	case end.Sub(b.StartsAt) > lim.MaxLength:
		fe.Add("ends_at", M("err.too_long_booking", "Days", int(lim.MaxLength/(24*time.Hour))))
	}
	if err := fe.Err(); err != nil {
		return time.Time{}, err
	}
	return end, nil
}

// CheckNote allows editing the note of an upcoming or active booking and
// returns the note as stored (trimmed). Past and cancelled bookings are
// read-only.
func CheckNote(b *Booking, actor *User, note string, lim BookingLimits, now time.Time) (string, error) {
	if err := checkChange(b, actor); err != nil {
		return "", err
	}
	if p := b.Phase(now); p != PhaseUpcoming && p != PhaseActive {
		return "", phaseError(b, now)
	}
	fe := FieldErrors{}
	fe.Check("note", &note, lim.NoteText())
	if err := fe.Err(); err != nil {
		return "", err
	}
	return note, nil
}

// ExtendConflictError is the ECONFLICT answer to an extension that runs into
// other bookings. freeUntil is the latest end that is free, so that the user
// learns "free until 16:30" instead of just "no". Msg.Data["FreeUntil"] is a
// UTC time.Time: a page in another zone sets it to .In(loc) before
// translating, and the message formats it in the time's own zone.
func ExtendConflictError(b *Booking, conflicts []Conflict) *Error {
	freeUntil := ExtendFreeUntil(b, conflicts)
	key := "err.extend_conflict"
	if !freeUntil.After(b.EndsAt) {
		key = "err.extend_blocked"
	}
	return &Error{Code: ECONFLICT, Msg: M(key, "FreeUntil", freeUntil), Conflicts: conflicts}
}

// ExtendFreeUntil returns the latest end b could be extended to without
// overlapping conflicts: the earliest start among them, never before b's end.
func ExtendFreeUntil(b *Booking, conflicts []Conflict) time.Time {
	var free time.Time
	for _, c := range conflicts {
		if free.IsZero() || c.StartsAt.Before(free) {
			free = c.StartsAt
		}
	}
	if free.IsZero() || free.Before(b.EndsAt) {
		free = b.EndsAt
	}
	return free.UTC()
}

// checkChange refuses anyone but the owner or an admin.
func checkChange(b *Booking, actor *User) error {
	if !CanChangeBooking(actor, b) {
		return NewError(EFORBIDDEN, M("err.booking_not_yours"))
	}
	return nil
}

// phaseError explains why a cancelled or past booking cannot change.
func phaseError(b *Booking, now time.Time) error {
	if b.Phase(now) == PhaseCancelled {
		return NewError(EINVALID, M("err.booking_cancelled"))
	}
	return NewError(EINVALID, M("err.booking_past"))
}
