package models

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"
)

// What happens to a booking on a GPU taken out of service.
const (
	ServiceMove   = "move"   // onto a free GPU of the same model on the node
	ServiceCancel = "cancel" // cancelled, or ended now if it runs
)

// AuditBookingService records what taking a GPU out of service did to a booking.
const AuditBookingService = "booking.service"

// ServiceChoice is one booking on a GPU about to leave service, with the
// move that would keep it whole, when there is one.
type ServiceChoice struct {
	Booking Booking
	// Moves puts the booking's share of the GPU onto another one; nil when
	// no GPU of the same model is free over its whole span, or it runs.
	Moves []GPUMove
}

// CanMove reports whether the booking may be moved rather than cancelled.
func (c ServiceChoice) CanMove() bool { return len(c.Moves) > 0 }

// PlanService offers, for each future or running booking on gpu, a move to
// a free GPU of the same model on the same node, found as the pre-emption
// planner finds its moves. A running booking is never moved (its job runs
// on the card); earlier bookings claim their free GPU first, so that two
// offers never collide.
func PlanService(gpu int64, onGPU []Booking, gpus []GPU, busy []Booking, now time.Time) []ServiceChoice {
	bs := slices.Clone(onGPU)
	slices.SortFunc(bs, func(a, b Booking) int { return cmp.Or(a.StartsAt.Compare(b.StartsAt), cmp.Compare(a.ID, b.ID)) })
	claims := slices.Clone(busy)
	out := make([]ServiceChoice, 0, len(bs))
	for _, b := range bs {
		c := ServiceChoice{Booking: b}
		if b.StartsAt.After(now) {
			if moves, ok := findMove(b, []int64{gpu}, gpus, claims); ok {
				c.Moves = moves
				claims = append(claims, Booking{ID: -b.ID, GPUIDs: movedGPUs(b.GPUIDs, moves), StartsAt: b.StartsAt, EndsAt: b.EndsAt})
			}
		}
		out = append(out, c)
	}
	return out
}

// ServiceNotification is what the holder of a booking on a GPU taken out
// of service reads in the app: where the booking went, or that it ended.
func ServiceNotification(c ServiceChoice, action, gpuName, newGPU, reason string, now time.Time) Notification {
	id := strconv.FormatInt(c.Booking.ID, 10)
	act := "cancelled"
	if action == ServiceMove {
		act = "moved"
	}
	return Notification{UserID: c.Booking.UserID, Kind: NotifyOutOfService, CreatedAt: now, Link: BookingLink(c.Booking.ID),
		DedupKey: "service:booking:" + id + ":" + strconv.FormatInt(now.Unix(), 10),
		Params:   map[string]string{"Action": act, "Booking": id, "GPU": gpuName, "NewGPU": newGPU, "Reason": reason}}
}

// NotificationMailer renders an in-app notice as its email for one
// recipient; the store enqueues it beside the notice. nil sends no email.
type NotificationMailer func(n Notification, to *User) (OutboxMessage, error)

// GPUServiceStore takes a GPU out of service with care: the admin sees the
// bookings on it and decides, for each, a move or a cancellation.
type GPUServiceStore interface {
	GPUServicePlan(ctx context.Context, gpuID int64, now time.Time) ([]ServiceChoice, error)
	TakeGPUOutOfService(ctx context.Context, gpuID int64, reason string, decide map[int64]string, actor *User, now time.Time, mail NotificationMailer) error
	// PendingRequestsOnGPU lists the pending requests for the GPU, which
	// cannot be approved once it is out.
	PendingRequestsOnGPU(ctx context.Context, gpuID int64, now time.Time) ([]PriorityRequest, error)
}

// ValidateServiceReason checks the reason given for taking a GPU out of
// service before anything is shown or changed.
func ValidateServiceReason(reason *string) error {
	fe := FieldErrors{}
	if fe.Check("reason", reason, ReasonText) && *reason == "" {
		fe.Add("reason", M("err.reason_required"))
	}
	return fe.Err()
}
