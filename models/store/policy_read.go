package store

import (
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// policyRead is what one statement reads for a policy decision: the user
// and their teams, the limits that may apply to them, the settings, the
// model restrictions and the GPUs asked for.
type policyRead struct {
	in    models.PolicyInput // all but GPUModels, Held and Loans
	found bool               // whether the user exists
	user  models.User        // ID, Name, Email and IsAdmin only
	gpus  map[int64]models.GPU
}

// policyReadSQL is that statement. Every branch yields the same columns,
// told apart by kind. The limits come first because SQLite takes a column's
// declared type (DATETIME for at) from the first branch. %s is FOR UPDATE
// on PostgreSQL: the user's row is locked by the statement that reads it.
// What the user already holds is NOT read here: on PostgreSQL a statement
// that waited for the lock still sees the snapshot taken before it waited,
// so held bookings are read by a later statement (addUsage).
const policyReadSQL = `WITH me AS (SELECT id, name, email, is_admin FROM users WHERE id = ?%s)
SELECT 'l' AS kind, scope_id AS ref, 0 AS ref2, scope AS text1, rule AS text2, period AS text3, value AS num, FALSE AS flag, updated_at AS at
	FROM policy_limits
	WHERE scope = 'global' OR (scope = 'team' AND scope_id IN (SELECT team_id FROM memberships WHERE user_id = ?))
		OR (scope = 'user' AND scope_id = ?)
UNION ALL SELECT 's', 0, 0, key, value, '', 0, FALSE, updated_at FROM policy_settings
UNION ALL SELECT 'm', team_id, 0, model, '', '', 0, FALSE, CAST(NULL AS TIMESTAMPTZ) FROM policy_model_teams
UNION ALL SELECT 'u', id, 0, name, email, '', 0, is_admin, CAST(NULL AS TIMESTAMPTZ) FROM me
UNION ALL SELECT 't', m.team_id, 0, t.name, '', '', 0, FALSE, CAST(NULL AS TIMESTAMPTZ)
	FROM memberships m JOIN teams t ON t.id = m.team_id WHERE m.user_id = ?
UNION ALL SELECT 'g', g.id, g.node_id, g.model, n.name, '', g.idx, g.in_service, CAST(NULL AS TIMESTAMPTZ)
	FROM gpus g JOIN nodes n ON n.id = g.node_id WHERE g.id IN ?`

type policyReadRow struct {
	Kind  string     `gorm:"column:kind"`
	Ref   int64      `gorm:"column:ref"`
	Ref2  int64      `gorm:"column:ref2"`
	Text1 string     `gorm:"column:text1"`
	Text2 string     `gorm:"column:text2"`
	Text3 string     `gorm:"column:text3"`
	Num   int64      `gorm:"column:num"`
	Flag  bool       `gorm:"column:flag"`
	At    *time.Time `gorm:"column:at"`
}

// readPolicy runs policyReadSQL for userID and gpuIDs (none: no GPU rows),
// locking the user's row on PostgreSQL when lock is set.
func readPolicy(tx *gorm.DB, userID int64, gpuIDs []int64, lim models.BookingLimits, lock bool) (policyRead, error) {
	loc := lim.Location
	if loc == nil {
		loc = time.UTC
	}
	r := policyRead{in: models.PolicyInput{UserID: userID, System: lim, Location: loc, TeamNames: map[int64]string{},
		Limits: []models.PolicyLimit{}, ModelTeams: map[string][]int64{}}, gpus: map[int64]models.GPU{}}
	forUpdate := ""
	if lock && tx.Dialector.Name() == Postgres {
		forUpdate = " FOR UPDATE"
	}
	var rows []policyReadRow
	if err := tx.Raw(fmt.Sprintf(policyReadSQL, forUpdate), userID, userID, userID, userID, gpuIDs).Scan(&rows).Error; err != nil {
		return r, fmt.Errorf("store: policy read: %w", err)
	}
	var settings []policySettingRow
	for _, row := range rows {
		switch row.Kind {
		case "l":
			l := models.PolicyLimit{Scope: row.Text1, ScopeID: row.Ref, Rule: row.Text2, Period: row.Text3, Value: row.Num}
			if row.At != nil {
				l.UpdatedAt = row.At.UTC()
			}
			r.in.Limits = append(r.in.Limits, l)
		case "s":
			settings = append(settings, policySettingRow{Key: row.Text1, Value: row.Text2})
		case "m":
			r.in.ModelTeams[row.Text1] = append(r.in.ModelTeams[row.Text1], row.Ref)
		case "u":
			r.found = true
			r.user = models.User{ID: row.Ref, Name: row.Text1, Email: row.Text2, IsAdmin: row.Flag}
		case "t":
			r.in.TeamIDs = append(r.in.TeamIDs, row.Ref)
			r.in.TeamNames[row.Ref] = row.Text1
		case "g":
			r.gpus[row.Ref] = models.GPU{ID: row.Ref, NodeID: row.Ref2, Model: row.Text1, NodeName: row.Text2, Index: int(row.Num), InService: row.Flag}
		}
	}
	models.SortLimits(r.in.Limits)
	slices.Sort(r.in.TeamIDs)
	for _, teams := range r.in.ModelTeams {
		slices.Sort(teams)
	}
	r.in.Settings = settingsFrom(settings)
	r.in.IsAdmin, r.in.UserName = r.user.IsAdmin, r.user.Name
	return r, nil
}

// addUsage reads the user's held bookings and loans in the quota weeks of
// [from, to) into in: always, or only when a limit counts them.
func addUsage(tx *gorm.DB, in *models.PolicyInput, from, to time.Time, always bool) error {
	if !always && !in.NeedsUsage() {
		return nil
	}
	var err error
	ws, we := models.WeekStart(from, in.Location), models.NextWeek(models.WeekStart(to, in.Location))
	if in.Held, err = heldBookings(tx, in.UserID, ws, we); err != nil {
		return err
	}
	in.Loans, err = loansBetween(tx, ws, we, in.UserID)
	return err
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
