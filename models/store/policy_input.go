package store

import (
	"context"
	"fmt"
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
	gpus, err := gpusByID(tx, req.GPUIDs)
	if err != nil {
		return nil, err
	}
	if req, err = models.ValidateNewBooking(req, gpus, lim, now); err != nil {
		return nil, err
	}
	return evaluate(tx, req, gpus, lim, now)
}

// evaluate runs the pure evaluator on the data loaded in tx.
func evaluate(tx *gorm.DB, req models.NewBooking, gpus map[int64]models.GPU, lim models.BookingLimits, now time.Time) ([]models.PolicyBreach, error) {
	in, err := policyInput(tx, req.UserID, req.StartsAt, req.EndsAt, lim)
	if err != nil {
		return nil, err
	}
	for _, id := range req.GPUIDs {
		in.GPUModels = append(in.GPUModels, gpus[id].Model)
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
	gpus, err := gpusByID(tx, b.GPUIDs)
	if err != nil {
		return nil, err
	}
	in, err := policyInput(tx, b.UserID, b.StartsAt, end, lim)
	if err != nil {
		return nil, err
	}
	in.ExceptBooking, in.Extending = b.ID, true
	for _, id := range b.GPUIDs {
		in.GPUModels = append(in.GPUModels, gpus[id].Model)
	}
	return models.EvaluatePolicy(req, in, now), nil
}

func policyInput(tx *gorm.DB, userID int64, from, to time.Time, lim models.BookingLimits) (models.PolicyInput, error) {
	loc := lim.Location
	if loc == nil {
		loc = time.UTC
	}
	in := models.PolicyInput{UserID: userID, System: lim, Location: loc, TeamNames: map[int64]string{}}
	var u userRow
	if err := tx.Take(&u, "id = ?", userID).Error; err != nil {
		return in, mapErr(err, "user")
	}
	in.IsAdmin, in.UserName = u.IsAdmin, u.Name
	var ms []membershipRow
	err := tx.Table("memberships m").Select("m.*, t.name AS team_name").Joins("JOIN teams t ON t.id = m.team_id").
		Where("m.user_id = ?", userID).Order("m.team_id").Find(&ms).Error
	if err != nil {
		return in, fmt.Errorf("store: policy teams: %w", err)
	}
	for _, m := range ms {
		in.TeamIDs = append(in.TeamIDs, m.TeamID)
		in.TeamNames[m.TeamID] = m.TeamName
	}
	if in.Limits, err = limitsWhere(tx, "scope = 'global' OR (scope = 'team' AND scope_id IN ?) OR (scope = 'user' AND scope_id = ?)",
		append(in.TeamIDs, 0), userID); err != nil {
		return in, err
	}
	if in.Settings, err = policySettings(tx); err != nil {
		return in, err
	}
	if in.ModelTeams, err = modelTeams(tx); err != nil {
		return in, err
	}
	ws, we := models.WeekStart(from, loc), models.NextWeek(models.WeekStart(to, loc))
	if in.Held, err = heldBookings(tx, userID, ws, we); err != nil {
		return in, err
	}
	in.Loans, err = loansBetween(tx, ws, we, userID)
	return in, err
}

// heldBookings returns the user's blocking bookings overlapping [from, to),
// each with as many GPU ids as it holds GPUs (the evaluator counts them).
func heldBookings(tx *gorm.DB, userID int64, from, to time.Time) ([]models.Booking, error) {
	var rows []struct {
		ID       int64     `gorm:"column:id"`
		StartsAt time.Time `gorm:"column:starts_at"`
		EndsAt   time.Time `gorm:"column:ends_at"`
		Kind     string    `gorm:"column:kind"`
		N        int       `gorm:"column:n"`
	}
	err := tx.Table("bookings b").
		Select("b.id, b.starts_at, b.ends_at, b.kind, (SELECT count(*) FROM booking_gpus bg WHERE bg.booking_id = b.id) AS n").
		Where("b.user_id = ? AND b.status = ? AND b.ends_at > ? AND b.starts_at < ?", userID, models.StatusConfirmed, utc(from), utc(to)).
		Order("b.starts_at").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: held bookings: %w", err)
	}
	out := make([]models.Booking, len(rows))
	for i, r := range rows {
		ids := make([]int64, r.N)
		for j := range ids {
			ids[j] = int64(j + 1)
		}
		out[i] = models.Booking{ID: r.ID, UserID: userID, GPUIDs: ids, StartsAt: r.StartsAt.UTC(), EndsAt: r.EndsAt.UTC(),
			Kind: r.Kind, Status: models.StatusConfirmed}
	}
	return out, nil
}
