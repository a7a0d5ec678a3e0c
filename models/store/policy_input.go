package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

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
	breaches, _, err := evaluate(tx, req, gpus, lim, now, false)
	return breaches, err
}

// evaluate runs the pure evaluator on the data loaded in tx (taking the
// user's lock first if lock is set). It also returns the user as read
// there, so that the caller need not read it again.
func evaluate(tx *gorm.DB, req models.NewBooking, gpus map[int64]models.GPU, lim models.BookingLimits, now time.Time, lock bool) ([]models.PolicyBreach, *models.User, error) {
	in, u, err := loadPolicyInput(tx, req.UserID, req.StartsAt, req.EndsAt, lim, inputOpts{lock: lock})
	if err != nil {
		return nil, nil, err
	}
	for _, id := range req.GPUIDs {
		in.GPUModels = append(in.GPUModels, gpus[id].Model)
	}
	return models.EvaluatePolicy(req, in, now), u, nil
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
	in, _, err := loadPolicyInput(tx, b.UserID, b.StartsAt, end, lim, inputOpts{})
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
	in, _, err := loadPolicyInput(tx, userID, from, to, lim, inputOpts{allUsage: true})
	return in, err
}

// inputOpts says what loadPolicyInput does besides reading the policy.
type inputOpts struct {
	// lock takes the user's row FOR UPDATE on PostgreSQL, in the statement
	// that reads the user, so that one user's policy checks run one at a time.
	lock bool
	// allUsage reads the held bookings and loans even when no limit counts
	// them (pages show them); the evaluator alone needs them only then.
	allUsage bool
}

// loadPolicyInput reads the policy input in three queries (the user with
// their teams, the policy, then the held bookings and loans when needed) and
// returns the user it read.
func loadPolicyInput(tx *gorm.DB, userID int64, from, to time.Time, lim models.BookingLimits, o inputOpts) (models.PolicyInput, *models.User, error) {
	loc := lim.Location
	if loc == nil {
		loc = time.UTC
	}
	in := models.PolicyInput{UserID: userID, System: lim, Location: loc, TeamNames: map[int64]string{}}
	u, err := policyUser(tx, &in, o.lock)
	if err != nil {
		return in, nil, err
	}
	if err := policyConfig(tx, &in); err != nil {
		return in, nil, err
	}
	if !o.allUsage && !in.NeedsUsage() {
		return in, u, nil
	}
	ws, we := models.WeekStart(from, loc), models.NextWeek(models.WeekStart(to, loc))
	if in.Held, err = heldBookings(tx, userID, ws, we); err != nil {
		return in, nil, err
	}
	if in.Loans, err = loansBetween(tx, ws, we, userID); err != nil {
		return in, nil, err
	}
	return in, u, nil
}

// policyUser reads the user and their teams in one query, locking the
// user's row when asked (PostgreSQL only; SQLite's BEGIN IMMEDIATE already
// admits one writer).
func policyUser(tx *gorm.DB, in *models.PolicyInput, lock bool) (*models.User, error) {
	var rows []struct {
		User     userRow `gorm:"embedded"`
		TeamID   *int64  `gorm:"column:m_team_id"`
		TeamName *string `gorm:"column:m_team_name"`
	}
	q := tx.Table("users u").Select("u.*, m.team_id AS m_team_id, t.name AS m_team_name").
		Joins("LEFT JOIN memberships m ON m.user_id = u.id").Joins("LEFT JOIN teams t ON t.id = m.team_id").
		Where("u.id = ?", in.UserID).Order("m.team_id")
	if lock && tx.Dialector.Name() == Postgres {
		q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate, Table: clause.Table{Name: "u"}})
	}
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: policy user: %w", err)
	}
	if len(rows) == 0 {
		return nil, mapErr(gorm.ErrRecordNotFound, "user")
	}
	for _, r := range rows {
		if r.TeamID != nil {
			in.TeamIDs = append(in.TeamIDs, *r.TeamID)
			in.TeamNames[*r.TeamID] = derefString(r.TeamName)
		}
	}
	u := rows[0].User.model()
	in.IsAdmin, in.UserName = u.IsAdmin, u.Name
	return u, nil
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// policyConfigSQL reads, in one statement, the limits that may apply to a
// user (global, their teams', their own), the settings and the model
// restrictions; kind tells the three apart.
const policyConfigSQL = `SELECT 'l' AS kind, scope AS name, scope_id AS ref, rule AS text1, period AS text2, value AS num, updated_at AS at
FROM policy_limits WHERE scope = 'global' OR (scope = 'team' AND scope_id IN ?) OR (scope = 'user' AND scope_id = ?)
UNION ALL SELECT 's', key, 0, value, '', 0, updated_at FROM policy_settings
UNION ALL SELECT 'm', model, team_id, '', '', 0, NULL FROM policy_model_teams
ORDER BY 1, 2, 3`

// policyConfig fills in's limits, settings and model restrictions, as
// limitsWhere, policySettings and modelTeams would, in one round trip.
func policyConfig(tx *gorm.DB, in *models.PolicyInput) error {
	var rows []struct {
		Kind  string     `gorm:"column:kind"`
		Name  string     `gorm:"column:name"`
		Ref   int64      `gorm:"column:ref"`
		Text1 string     `gorm:"column:text1"`
		Text2 string     `gorm:"column:text2"`
		Num   int64      `gorm:"column:num"`
		At    *time.Time `gorm:"column:at"`
	}
	if err := tx.Raw(policyConfigSQL, append(slices.Clone(in.TeamIDs), 0), in.UserID).Scan(&rows).Error; err != nil {
		return fmt.Errorf("store: policy: %w", err)
	}
	var settings []policySettingRow
	in.ModelTeams = map[string][]int64{}
	for _, r := range rows {
		switch r.Kind {
		case "l":
			l := models.PolicyLimit{Scope: r.Name, ScopeID: r.Ref, Rule: r.Text1, Period: r.Text2, Value: r.Num}
			if r.At != nil {
				l.UpdatedAt = r.At.UTC()
			}
			in.Limits = append(in.Limits, l)
		case "s":
			settings = append(settings, policySettingRow{Key: r.Name, Value: r.Text1})
		case "m":
			in.ModelTeams[r.Name] = append(in.ModelTeams[r.Name], r.Ref)
		}
	}
	models.SortLimits(in.Limits)
	if in.Limits == nil {
		in.Limits = []models.PolicyLimit{}
	}
	in.Settings = settingsFrom(settings)
	return nil
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
