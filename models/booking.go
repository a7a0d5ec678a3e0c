package models

import (
	"sort"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// Booking kinds. Priority bookings come from approved priority requests.
const (
	KindStandard = wire.KindStandard
	KindPriority = wire.KindPriority
)

// Booking statuses. A released booking stays confirmed with an earlier end;
// a cancelled one never holds its GPUs.
const (
	StatusConfirmed = "confirmed"
	StatusCancelled = "cancelled"
)

// Booking is one person's claim on one or more GPUs of one node for a time
// range [StartsAt, EndsAt). A multi-GPU booking is one thing to cancel,
// extend or release.
type Booking struct {
	ID         int64
	UserID     int64
	NodeID     int64
	GPUIDs     []int64
	StartsAt   time.Time
	EndsAt     time.Time
	Note       string
	Kind       string
	Status     string
	ReleasedAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// Filled by queries, for display.
	UserName  string
	UserEmail string
	NodeName  string
	// GPUUUIDs are the UUIDs of GPUIDs, in the same order, where the query
	// read them with the booking (one booking read, created or changed);
	// nil from lists, which callers map themselves.
	GPUUUIDs []string
}

// Blocking reports whether the booking holds its GPUs (no other booking may overlap it).
func (b *Booking) Blocking() bool { return b.Status == StatusConfirmed }

// Overlaps reports whether [aStart, aEnd) and [bStart, bEnd) share an instant.
// Touching ranges (one ends when the next starts) do not overlap.
func Overlaps(aStart, aEnd, bStart, bEnd time.Time) bool {
	return aStart.Before(bEnd) && bStart.Before(aEnd)
}

// BookingPhase says where a booking stands relative to now.
type BookingPhase string

// Phases of a booking, as seen at one instant.
const (
	PhaseUpcoming  BookingPhase = "upcoming"
	PhaseActive    BookingPhase = "active"
	PhasePast      BookingPhase = "past"
	PhaseCancelled BookingPhase = "cancelled"
)

// Phase returns the booking's phase at now. A released booking is past at
// once, even in the second its stored end still lies ahead.
func (b *Booking) Phase(now time.Time) BookingPhase {
	switch {
	case b.Status == StatusCancelled:
		return PhaseCancelled
	case b.ReleasedAt != nil && !now.Before(*b.ReleasedAt):
		return PhasePast
	case now.Before(b.StartsAt):
		return PhaseUpcoming
	case now.Before(b.EndsAt):
		return PhaseActive
	default:
		return PhasePast
	}
}

// BookingLimits are the bounds every booking respects until a policy says otherwise.
type BookingLimits struct {
	Slot        time.Duration // the shortest booking and the grid's step
	MaxLength   time.Duration
	MaxAhead    time.Duration // how far in the future a booking may start
	MaxNoteLen  int           // in characters
	StartGrace  time.Duration // a start this far in the past counts as "now"
	MaxGPUCount int
	// Location is the cluster's zone, in which policies (peak hours, quota
	// weeks) are evaluated; nil means UTC.
	Location *time.Location
	// ImportYearsBack and ImportYearsAhead bound the dates of imported
	// bookings (see ImportRules).
	ImportYearsBack, ImportYearsAhead int
}

// ImportRules are the rules an import file is read with at now, its local
// times in loc (the cluster's zone).
func (l BookingLimits) ImportRules(loc *time.Location, now time.Time) ImportRules {
	return ImportRules{Location: loc, Now: now, YearsBack: l.ImportYearsBack, YearsAhead: l.ImportYearsAhead}
}

// NoteText is the rule for a booking's note, wherever it comes from: a few
// lines, at most MaxNoteLen characters.
func (l BookingLimits) NoteText() TextRule { return TextRule{Max: l.MaxNoteLen, Multiline: true} }

// DefaultBookingLimits are the limits of the booking issue: one slot of 30
// minutes at least, 14 days at most, up to 60 days ahead.
var DefaultBookingLimits = BookingLimits{
	Slot:        30 * time.Minute,
	MaxLength:   14 * 24 * time.Hour,
	MaxAhead:    60 * 24 * time.Hour,
	MaxNoteLen:  500,
	StartGrace:  5 * time.Minute,
	MaxGPUCount: 64,

	ImportYearsBack:  DefaultImportYearsBack,
	ImportYearsAhead: DefaultImportYearsAhead,
}

// NewBooking is what a user asks for: which GPUs, when, and why.
type NewBooking struct {
	UserID   int64
	GPUIDs   []int64
	StartsAt time.Time
	EndsAt   time.Time
	Note     string
}

// ValidateNewBooking checks a request against the limits and the GPUs it
// names, at now. It returns the request with a normalised note, start
// (a start within the grace period becomes now) and UTC times.
func ValidateNewBooking(req NewBooking, gpus map[int64]GPU, lim BookingLimits, now time.Time) (NewBooking, error) {
	fe := FieldErrors{}
	fe.Check("note", &req.Note, lim.NoteText())
	validateGPUs(req.GPUIDs, gpus, lim, fe)
	validateRange(&req, lim, now, fe)
	if err := fe.Err(); err != nil {
		return req, err
	}
	sort.Slice(req.GPUIDs, func(i, j int) bool { return req.GPUIDs[i] < req.GPUIDs[j] })
	return req, nil
}

// CheckGPUIDs applies the rules every list of GPUs asked for obeys, on
// every way in (form, API, policy check): at least one, at most
// lim.MaxGPUCount, each a positive id listed once. It stops at the first
// problem and reports whether there was none.
func CheckGPUIDs(ids []int64, lim BookingLimits, fe FieldErrors) bool {
	switch {
	case len(ids) == 0:
		fe.Add("gpu_ids", M("err.gpus_required"))
		return false
	case len(ids) > lim.MaxGPUCount:
		fe.Add("gpu_ids", M("err.gpus_too_many", "Max", lim.MaxGPUCount))
		return false
	}
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		switch {
		case id <= 0:
			fe.Add("gpu_ids", M("err.gpu_id_invalid"))
			return false
		case seen[id]:
			fe.Add("gpu_ids", M("err.gpu_duplicate", "ID", id))
			return false
		}
		seen[id] = true
	}
	return true
}

// validateGPUs checks the list, then that every GPU exists, is in service,
// is not split into MIG instances and is on the same node as the others.
func validateGPUs(ids []int64, gpus map[int64]GPU, lim BookingLimits, fe FieldErrors) {
	if !CheckGPUIDs(ids, lim, fe) {
		return
	}
	node := int64(0)
	for _, id := range ids {
		g, ok := gpus[id]
		switch {
		case !ok:
			fe.Add("gpu_ids", M("err.gpu_missing", "ID", id))
		case !g.InService:
			fe.Add("gpu_ids", M("err.gpu_out_of_service", "ID", id))
		case g.IsMIGParent(): // booked through its instances
			fe.Add("gpu_ids", M("err.gpu_mig_parent", "ID", id))
		case node != 0 && g.NodeID != node:
			fe.Add("gpu_ids", M("err.gpus_one_node"))
		}
		if ok && node == 0 {
			node = g.NodeID
		}
	}
}

func validateRange(req *NewBooking, lim BookingLimits, now time.Time, fe FieldErrors) {
	if req.StartsAt.IsZero() {
		fe.Add("starts_at", M("err.start_required"))
	}
	if req.EndsAt.IsZero() {
		fe.Add("ends_at", M("err.end_required"))
	}
	if req.StartsAt.IsZero() || req.EndsAt.IsZero() {
		return
	}
	req.StartsAt, req.EndsAt = req.StartsAt.UTC().Truncate(time.Second), req.EndsAt.UTC().Truncate(time.Second)
	if req.StartsAt.Before(now) && !req.StartsAt.Before(now.Add(-lim.StartGrace)) {
		req.StartsAt = now.UTC().Truncate(time.Second)
	}
	length := req.EndsAt.Sub(req.StartsAt)
	switch {
	case req.StartsAt.Before(now.Add(-lim.StartGrace)):
		fe.Add("starts_at", M("err.start_past"))
	case req.StartsAt.After(now.Add(lim.MaxAhead)):
		fe.Add("starts_at", M("err.start_too_far", "Days", int(lim.MaxAhead/(24*time.Hour))))
	}
	switch {
	case !req.EndsAt.After(req.StartsAt):
		fe.Add("ends_at", M("err.end_before_start"))
	case length < lim.Slot:
		fe.Add("ends_at", M("err.too_short", "Minutes", int(lim.Slot/time.Minute)))
	case length > lim.MaxLength:
		fe.Add("ends_at", M("err.too_long_booking", "Days", int(lim.MaxLength/(24*time.Hour))))
	}
}

// Conflict describes a booking that stands in the way of another, so that the
// user learns which GPU, who and when.
type Conflict struct {
	GPUID    int64 `json:"gpu_id"`
	GPUIndex int   `json:"gpu_index"`
	// GPUName is how people know the unit (UnitName): a MIG instance's
	// index means nothing to them.
	GPUName   string    `json:"-"`
	BookingID int64     `json:"booking_id"`
	UserName  string    `json:"user_name"`
	StartsAt  time.Time `json:"starts_at"`
	EndsAt    time.Time `json:"ends_at"`
}

// ConflictError is the ECONFLICT answer to a booking that overlaps others.
func ConflictError(conflicts []Conflict) *Error {
	return &Error{Code: ECONFLICT, Msg: M("err.booking_conflict", "Count", len(conflicts)), Conflicts: conflicts}
}

// CanChangeBooking reports whether actor may cancel, release, extend or edit b:
// owners change their own bookings, admins anyone's (and are audited).
func CanChangeBooking(actor *User, b *Booking) bool {
	return actor != nil && (actor.IsAdmin || actor.ID == b.UserID)
}

// BookingFilter selects bookings that overlap [From, To).
type BookingFilter struct {
	From, To time.Time
	GPUID    int64
	NodeID   int64
	// NodeIDs, when not nil, keeps the bookings of these nodes only (none
	// when empty): a page of a large lab's nodes reads its own bookings,
	// not the lab's.
	NodeIDs          []int64
	UserID           int64
	TeamID           int64 // the bookings of the team's members
	IncludeCancelled bool
	// Limit > 0 reads at most that many, the first by start ("my next
	// 20"). 0 reads every one, up to MaxBookingsRead: a range holding more
	// is refused with ErrTooManyBookings, never answered in part (a partial
	// list shows booked GPUs as free).
	Limit int
}

// MaxBookingsRead is the most bookings one read of a whole range returns.
const MaxBookingsRead = 100000

// ErrTooManyBookings refuses a range that holds more than MaxBookingsRead
// bookings: a narrower range (or a node's, a user's) answers.
func ErrTooManyBookings() *Error {
	return NewError(EINVALID, M("err.too_many_bookings", "Max", MaxBookingsRead))
}
