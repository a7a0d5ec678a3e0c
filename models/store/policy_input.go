package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// PolicyInputFor loads what the evaluator needs to judge a booking of
// userID within [from, to): the limits that may apply, the settings, the
// user's teams, their bookings and loans in the quota weeks concerned.
func (db *DB) PolicyInputFor(ctx context.Context, userID int64, from, to time.Time, lim models.BookingLimits) (models.PolicyInput, error) {
	return policyInput(db.Gorm.WithContext(ctx), userID, from, to, lim)
}

// CheckBooking validates req and evaluates the policy, writing nothing: the
// booking form's live check. Conflicts with other bookings are not its
// business; CreateBooking reports them.
func (db *DB) CheckBooking(ctx context.Context, req models.NewBooking, lim models.BookingLimits, now time.Time) ([]models.PolicyBreach, error) {
	tx := db.Gorm.WithContext(ctx)
	r, err := readPolicy(tx, req.UserID, req.GPUIDs, lim, false)
	if err != nil {
		return nil, err
	}
	if req, err = models.ValidateNewBooking(req, r.gpus, lim, now); err != nil {
		return nil, err
	}
	return evaluate(tx, req, r, now)
}

// evaluate runs the pure evaluator on r and on what the user holds, read in
// tx after r (so after the user's lock, where r took it).
func evaluate(tx *gorm.DB, req models.NewBooking, r policyRead, now time.Time) ([]models.PolicyBreach, error) {
	if !r.found {
		return nil, mapErr(gorm.ErrRecordNotFound, "user")
	}
	in := r.in
	if err := addUsage(tx, &in, req.StartsAt, req.EndsAt, false); err != nil {
		return nil, err
	}
	for _, id := range req.GPUIDs {
		in.GPUModels = append(in.GPUModels, r.gpus[id].Model)
		in.GPUWeights = append(in.GPUWeights, r.gpus[id].Weight)
	}
	return models.EvaluatePolicy(req, in, now), nil
}

// checkExtendPolicy refuses an extension that would break the policy.
func checkExtendPolicy(tx *gorm.DB, b *models.Booking, end time.Time, lim models.BookingLimits, now time.Time) error {
	bs, err := evaluateExtend(tx, b, end, lim, now)
	if err != nil {
		return err
	}
	if len(bs) > 0 {
		return models.PolicyError(bs)
	}
	return nil
}

// evaluateExtend judges a standard booking as if it ended at end, leaving
// the booking itself out of what the user holds. Priority bookings were
// approved beyond policy and are not judged again.
func evaluateExtend(tx *gorm.DB, b *models.Booking, end time.Time, lim models.BookingLimits, now time.Time) ([]models.PolicyBreach, error) {
	if b.Kind == models.KindPriority {
		return nil, nil
	}
	req := models.NewBooking{UserID: b.UserID, GPUIDs: b.GPUIDs, StartsAt: b.StartsAt, EndsAt: end}
	r, err := readPolicy(tx, b.UserID, b.GPUIDs, lim, false)
	if err != nil {
		return nil, err
	}
	r.in.ExceptBooking, r.in.Extending = b.ID, true
	return evaluate(tx, req, r, now)
}

// policyInput is the whole policy input of userID, with their held
// bookings and loans whether or not a limit counts them (pages show them).
func policyInput(tx *gorm.DB, userID int64, from, to time.Time, lim models.BookingLimits) (models.PolicyInput, error) {
	r, err := readPolicy(tx, userID, nil, lim, false)
	if err != nil {
		return r.in, err
	}
	if !r.found {
		return r.in, mapErr(gorm.ErrRecordNotFound, "user")
	}
	err = addUsage(tx, &r.in, from, to, true)
	return r.in, err
}
