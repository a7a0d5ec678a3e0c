package store

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
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

// The policy read is one statement (a booking is judged in one round trip)
// that returns rows of six kinds in the same columns:
//
//	kind          ref        ref2     text1    text2    text3    num      flag        at          split   weight
//	rowLimit      scope_id   -        scope    rule     period   value    -           updated_at  -       -
//	rowSetting    -          -        key      value    -        -        -           updated_at  -       -
//	rowModelTeam  team_id    -        model    -        -        -        -           -           -       -
//	rowUser       id         -        name     email    -        -        is_admin    -           -       -
//	rowTeam       team_id    -        name     -        -        -        -           -           -       -
//	rowGPU        gpu id     node_id  model    node     uuid     index    in_service  -           slices  weight
//
// A GPU's split is its MIG slices while it is split into instances (a MIG
// parent, not bookable whole), else 0; weight is what the unit counts as
// in the limits (a MIG instance's share of its GPU).
// The limits come first because SQLite takes a column's declared type
// (DATETIME for at) from the first branch. The two %s lock on PostgreSQL
// (writerLock): the user's row and the GPUs' rows are locked by the
// statement that reads them, the GPUs in the order of their ids. What the user
// already holds is NOT read here: on PostgreSQL a statement that waited for
// the lock still sees the snapshot taken before it waited, so held bookings
// are read by a later statement (addUsage).
const policyReadSQL = `WITH me AS (SELECT id, name, email, is_admin FROM users WHERE id = ?%s)
SELECT 'l' AS kind, scope_id AS ref, 0 AS ref2, scope AS text1, rule AS text2, period AS text3, value AS num, FALSE AS flag, updated_at AS at,
		0 AS split, CAST(1 AS DOUBLE PRECISION) AS weight
	FROM policy_limits
	WHERE scope = 'global' OR (scope = 'team' AND scope_id IN (SELECT team_id FROM memberships WHERE user_id = ?))
		OR (scope = 'user' AND scope_id = ?)
UNION ALL SELECT 's', 0, 0, key, value, '', 0, FALSE, updated_at, 0, 1 FROM policy_settings
UNION ALL SELECT 'm', team_id, 0, model, '', '', 0, FALSE, CAST(NULL AS TIMESTAMPTZ), 0, 1 FROM policy_model_teams
UNION ALL SELECT 'u', id, 0, name, email, '', 0, is_admin, CAST(NULL AS TIMESTAMPTZ), 0, 1 FROM me
UNION ALL SELECT 't', m.team_id, 0, t.name, '', '', 0, FALSE, CAST(NULL AS TIMESTAMPTZ), 0, 1
	FROM memberships m JOIN teams t ON t.id = m.team_id WHERE m.user_id = ?
UNION ALL SELECT 'g', g.id, g.node_id, g.model, n.name, g.uuid, g.idx, g.in_service, CAST(NULL AS TIMESTAMPTZ),
		CASE WHEN g.parent_id IS NULL AND g.mig THEN g.mig_slices ELSE 0 END, g.weight
	FROM (SELECT id, node_id, model, uuid, idx, in_service, parent_id, mig, mig_slices, weight FROM gpus WHERE id IN ?%s) g
	JOIN nodes n ON n.id = g.node_id`

// policyQuery is policyReadSQL and its arguments for the dialect, in its
// parameter markers: the store runs it without GORM (raw_sql.go). On
// PostgreSQL lock takes the user's row and the GPU list is one array
// parameter. On SQLite every parameter is written "+?": SQLite compiles a
// statement again whenever a new value of a bare parameter might change
// its plan (here the join of memberships by user and the IN list), which
// cost more than running it (about 55 µs of every booking;
// BenchmarkPolicyQuery in policy_read_internal_test.go); "+?" is an
// expression of the parameter, planned once for every value.
func policyQuery(dialect string, lock bool, userID int64, gpuIDs []int64) (string, []any) {
	args := []any{userID, userID, userID, userID}
	if dialect == Postgres {
		if lock {
			return policyReadPG[1], append(args, pgIDArray(gpuIDs))
		}
		return policyReadPG[0], append(args, pgIDArray(gpuIDs))
	}
	for _, id := range gpuIDs {
		args = append(args, id)
	}
	if len(gpuIDs) == 1 { // booking one GPU, the most common
		return policyReadSQLite1, args
	}
	return policySQLite(len(gpuIDs)), args
}

// policySQLite is policyReadSQL for SQLite with n GPUs.
func policySQLite(n int) string {
	in := "(NULL)"
	if n > 0 {
		in = "(+?" + strings.Repeat(", +?", n-1) + ")"
	}
	q := strings.ReplaceAll(fmt.Sprintf(policyReadSQL, "", ""), "= ?", "= +?")
	return strings.Replace(q, "IN ?", "IN "+in, 1)
}

// The policy read's texts made once: PostgreSQL's without and with the
// lock, SQLite's for one GPU.
var (
	policyReadPG = [2]string{
		DollarParams(strings.Replace(fmt.Sprintf(policyReadSQL, "", ""), "IN ?", "= ANY(CAST(? AS bigint[]))", 1)),
		DollarParams(strings.Replace(fmt.Sprintf(policyReadSQL, " "+writerLock, " ORDER BY id "+writerLock), "IN ?", "= ANY(CAST(? AS bigint[]))", 1)),
	}
	policyReadSQLite1 = policySQLite(1)
)

// The kinds of row policyReadSQL returns.
const (
	rowLimit     = "l"
	rowSetting   = "s"
	rowModelTeam = "m"
	rowUser      = "u"
	rowTeam      = "t"
	rowGPU       = "g"
)

// policyReadRow is one row of policyReadSQL; the methods below read it as
// the kind it is, following the table above.
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
	Split int        `gorm:"column:split"`
	W     float64    `gorm:"column:weight"`
}

func (r policyReadRow) limit() models.PolicyLimit {
	l := models.PolicyLimit{Scope: r.Text1, ScopeID: r.Ref, Rule: r.Text2, Period: r.Text3, Value: r.Num}
	if r.At != nil {
		l.UpdatedAt = r.At.UTC()
	}
	return l
}

func (r policyReadRow) setting() policySettingRow {
	return policySettingRow{Key: r.Text1, Value: r.Text2}
}

func (r policyReadRow) modelTeam() (model string, teamID int64) { return r.Text1, r.Ref }

func (r policyReadRow) user() models.User {
	return models.User{ID: r.Ref, Name: r.Text1, Email: r.Text2, IsAdmin: r.Flag}
}

func (r policyReadRow) team() (id int64, name string) { return r.Ref, r.Text1 }

func (r policyReadRow) gpu() models.GPU {
	return models.GPU{ID: r.Ref, NodeID: r.Ref2, Model: r.Text1, NodeName: r.Text2, UUID: r.Text3, Index: int(r.Num), InService: r.Flag,
		MIG: r.Split > 0, MIGSlices: r.Split, Weight: r.W}
}

// readPolicy runs policyReadSQL for userID and gpuIDs (none: no GPU rows),
// locking the user's row on PostgreSQL when lock is set.
func readPolicy(tx *gorm.DB, userID int64, gpuIDs []int64, lim models.BookingLimits, lock bool) (policyRead, error) {
	query, args := policyQuery(tx.Dialector.Name(), lock, userID, gpuIDs)
	rows, err := scanPolicyRows(rawTx(tx), query, args)
	if err != nil {
		return newPolicyRead(userID, lim, nil), fmt.Errorf("store: policy read: %w", err)
	}
	return newPolicyRead(userID, lim, rows), nil
}

// newPolicyRead is what the rows of policyReadSQL say for userID.
func newPolicyRead(userID int64, lim models.BookingLimits, rows []policyReadRow) policyRead {
	loc := lim.Location
	if loc == nil {
		loc = time.UTC
	}
	r := policyRead{in: models.PolicyInput{UserID: userID, System: lim, Location: loc, TeamNames: map[int64]string{},
		Limits: []models.PolicyLimit{}, ModelTeams: map[string][]int64{}}, gpus: map[int64]models.GPU{}}
	var settings []policySettingRow
	for _, row := range rows {
		switch row.Kind {
		case rowLimit:
			r.in.Limits = append(r.in.Limits, row.limit())
		case rowSetting:
			settings = append(settings, row.setting())
		case rowModelTeam:
			model, team := row.modelTeam()
			r.in.ModelTeams[model] = append(r.in.ModelTeams[model], team)
		case rowUser:
			r.found, r.user = true, row.user()
		case rowTeam:
			id, name := row.team()
			r.in.TeamIDs = append(r.in.TeamIDs, id)
			r.in.TeamNames[id] = name
		case rowGPU:
			g := row.gpu()
			r.gpus[g.ID] = g
		}
	}
	models.SortLimits(r.in.Limits)
	slices.Sort(r.in.TeamIDs)
	for _, teams := range r.in.ModelTeams {
		slices.Sort(teams)
	}
	r.in.Settings = settingsFrom(settings)
	r.in.IsAdmin, r.in.UserName = r.user.IsAdmin, r.user.Name
	return r
}

// scanPolicyRows runs the policy read and scans its rows by hand, on the
// concrete *sql.Rows, whose Scan the compiler sees does not keep its
// destinations: each row's variables then stay on the stack, where through
// an interface they are allocated (about 300 bytes and two allocations a
// booking on SQLite).
func scanPolicyRows(conn raw, query string, args []any) ([]policyReadRow, error) {
	rows, err := conn.conn.QueryContext(conn.ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []policyReadRow
	for rows.Next() {
		var r policyReadRow
		var at sql.NullTime
		if err := rows.Scan(&r.Kind, &r.Ref, &r.Ref2, &r.Text1, &r.Text2, &r.Text3, &r.Num, &r.Flag, &at, &r.Split, &r.W); err != nil {
			return nil, err
		}
		out = append(out, r.withAt(&at))
	}
	return out, rows.Err()
}

// withAt is r with its at column.
func (r policyReadRow) withAt(at *sql.NullTime) policyReadRow {
	if at.Valid {
		r.At = &at.Time
	}
	return r
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

// heldRead reads the user's confirmed bookings overlapping [?3, ?4), each
// with the number of units it holds and what they weigh together (a MIG
// instance its share of its GPU).
var heldRead = newRawSQL(`SELECT b.id, b.starts_at, b.ends_at, b.kind, (SELECT count(*) FROM booking_gpus bg WHERE bg.booking_id = b.id),
		(SELECT COALESCE(sum(g.weight), 0) FROM booking_gpus bg JOIN gpus g ON g.id = bg.gpu_id WHERE bg.booking_id = b.id)
	FROM bookings b WHERE b.user_id = ? AND b.status = ? AND b.ends_at > ? AND b.starts_at < ? ORDER BY b.starts_at`)

// heldBookings returns the user's blocking bookings overlapping [from, to),
// each with the number of GPUs it holds (heldRead).
func heldBookings(tx *gorm.DB, userID int64, from, to time.Time) ([]models.Holding, error) {
	scan := func(rows *sql.Rows) (models.Holding, error) {
		h := models.Holding{UserID: userID, Status: models.StatusConfirmed}
		err := rows.Scan(&h.ID, &h.StartsAt, &h.EndsAt, &h.Kind, &h.GPUs, &h.Weight)
		h.StartsAt, h.EndsAt = h.StartsAt.UTC(), h.EndsAt.UTC()
		return h, err
	}
	out, err := queryAll(rawTx(tx), heldRead, scan, userID, models.StatusConfirmed, utc(from), utc(to))
	if err != nil {
		return nil, fmt.Errorf("store: held bookings: %w", err)
	}
	return out, nil
}
