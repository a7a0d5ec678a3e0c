package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// spanRow is one (user, span) result of a figure query.
type spanRow struct {
	UID int64 `gorm:"column:uid"`
	I   int   `gorm:"column:i"`
	A   int64 `gorm:"column:a"`
	B   int64 `gorm:"column:b"`
}

// figureQuery is one figure's SQL and where its two columns go.
type figureQuery struct {
	name string
	sql  func(reportSQL, map[string]any, []models.Span) string
	put  func(f *models.Figures, a, b int64)
}

// figureQueries lists the per-user figures the database computes from the
// bookings and the user rows; minutesFigures adds those read from the
// GPU-minutes. Each is defined once, in report_sql.go; the email, the
// pages and the CSV all read them through ReportWeek.
var figureQueries = []figureQuery{
	{"booked", reportSQL.bookedSQL, func(f *models.Figures, a, _ int64) { f.BookedSec = a }},
	{"unbooked", reportSQL.unbookedSQL, func(f *models.Figures, a, _ int64) { f.UnbookedMin = a }},
	{"given back", reportSQL.givenBackSQL, func(f *models.Figures, a, b int64) { f.GivenBackSec, f.AutoGivenBackSec = a, b }},
	{"priority", reportSQL.prioritySQL, func(f *models.Figures, a, b int64) { f.PriorityMade, f.PriorityApproved = a, b }},
	{"pre-empted", reportSQL.preemptedSQL, func(f *models.Figures, a, _ int64) { f.Preempted = a }},
}

// ReportWeek computes week w for every user as of asOf (the end of the
// week for a finished one, now for the week in progress). The work is a
// handful of aggregate queries whatever the number of users; no per-minute
// row leaves the database.
func (db *DB) ReportWeek(ctx context.Context, w models.Week, asOf time.Time, rules models.ReportRules) (*models.WeekData, error) {
	rules = rules.OrDefault()
	d := &models.WeekData{Week: w, AsOf: asOf, Spans: models.ReportSpans(w, asOf), ByUser: map[int64][]models.Figures{}}
	q := reportSQL{pg: db.Dialect == Postgres, rules: rules}
	err := db.reportSnapshot(ctx, func(g *gorm.DB) error {
		for _, fq := range figureQueries {
			if err := figure(g, q, d, fq); err != nil {
				return err
			}
		}
		if err := minutesFigures(g, q, d); err != nil {
			return err
		}
		if err := reportContext(g, d); err != nil {
			return err
		}
		// Users and teams from the same snapshot as the figures, so that
		// a user added mid-run is either in both or in neither.
		var err error
		if d.Users, err = listUsers(g); err != nil {
			return err
		}
		d.Memberships, err = listMemberships(g, "m.team_id > ?", 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// reportSnapshot runs the report's queries. On PostgreSQL they share one
// read-only REPEATABLE READ snapshot, so that usage arriving mid-run
// cannot make the figures disagree, and JIT compilation is off: it costs
// more per query here than the short aggregates it would speed up. SQLite
// runs them as they are (a transaction there would take the write lock).
func (db *DB) reportSnapshot(ctx context.Context, fn func(*gorm.DB) error) error {
	if db.Dialect != Postgres {
		return fn(db.Gorm.WithContext(ctx))
	}
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").Error; err != nil {
			return fmt.Errorf("store: report snapshot: %w", err)
		}
		if err := tx.Exec("SET LOCAL jit = off").Error; err != nil {
			return fmt.Errorf("store: report snapshot: %w", err)
		}
		return fn(tx)
	})
}

// reportContext counts what the cluster summary needs besides the figures.
func reportContext(g *gorm.DB, d *models.WeekData) error {
	if err := g.Table("priority_requests").Where("status = ?", models.RequestPending).Count(&d.PendingRequests).Error; err != nil {
		return fmt.Errorf("store: report pending requests: %w", err)
	}
	var gpus int64
	if err := g.Table("gpus").Where("in_service").Count(&gpus).Error; err != nil {
		return fmt.Errorf("store: report gpus: %w", err)
	}
	d.GPUCount = int(gpus)
	var quotas []struct {
		ScopeID int64 `gorm:"column:scope_id"`
		Value   int64 `gorm:"column:value"`
	}
	err := g.Table("policy_limits").Select("scope_id, value").
		Where("scope = ? AND rule = ? AND period = ?", models.ScopeTeam, models.RuleMaxGPUHours, models.PeriodAll).Scan(&quotas).Error
	if err != nil {
		return fmt.Errorf("store: report team quotas: %w", err)
	}
	d.TeamQuotas = map[int64]int64{}
	for _, q := range quotas {
		d.TeamQuotas[q.ScopeID] = q.Value
	}
	return nil
}

func figure(g *gorm.DB, q reportSQL, d *models.WeekData, fq figureQuery) error {
	args := map[string]any{}
	var rows []spanRow
	if err := g.Raw(fq.sql(q, args, d.Spans), args).Scan(&rows).Error; err != nil {
		return fmt.Errorf("store: report %s: %w", fq.name, err)
	}
	for _, r := range rows {
		figs, ok := d.ByUser[r.UID]
		if !ok {
			figs = make([]models.Figures, len(d.Spans))
			d.ByUser[r.UID] = figs
		}
		fq.put(&figs[r.I], r.A, r.B)
	}
	return nil
}

// minutesFigures reads the figures of the one pass over the GPU-minutes
// (minutesSQL): each user's busy minutes and no-shows, and the cluster's
// busy minutes per span and UTC hour.
func minutesFigures(g *gorm.DB, q reportSQL, d *models.WeekData) error {
	d.ClusterBusyMin = make([]int64, len(d.Spans))
	d.HourBusyMin = map[int64]int64{}
	if lo, hi := bounds(d.Spans); !lo.Before(hi) {
		return nil // nothing of the week has happened yet
	}
	args := map[string]any{}
	var rows []struct {
		Kind string `gorm:"column:kind"`
		UID  int64  `gorm:"column:uid"`
		I    int    `gorm:"column:i"`
		H    int64  `gorm:"column:h"`
		A    int64  `gorm:"column:a"`
		B    int64  `gorm:"column:b"`
	}
	if err := g.Raw(q.minutesSQL(args, d.Spans), args).Scan(&rows).Error; err != nil {
		return fmt.Errorf("store: report minutes: %w", err)
	}
	for _, r := range rows {
		if r.Kind == "c" {
			d.ClusterBusyMin[r.I] += r.A
			d.HourBusyMin[r.H] += r.A
			continue
		}
		figs, ok := d.ByUser[r.UID]
		if !ok {
			figs = make([]models.Figures, len(d.Spans))
			d.ByUser[r.UID] = figs
		}
		figs[r.I].BusyMin += r.A
		figs[r.I].NoShows += r.B
	}
	return nil
}
