package store

import (
	"context"
	"fmt"
	"time"

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

// figureQueries lists every per-user figure the database computes. Each
// is defined once, in report_sql.go; the email, the pages and the CSV all
// read them through ReportWeek.
var figureQueries = []figureQuery{
	{"booked", reportSQL.bookedSQL, func(f *models.Figures, a, _ int64) { f.BookedSec = a }},
	{"busy", reportSQL.busySQL, func(f *models.Figures, a, _ int64) { f.BusyMin = a }},
	{"unbooked", reportSQL.unbookedSQL, func(f *models.Figures, a, _ int64) { f.UnbookedMin = a }},
	{"given back", reportSQL.givenBackSQL, func(f *models.Figures, a, b int64) { f.GivenBackSec, f.AutoGivenBackSec = a, b }},
	{"no-shows", reportSQL.noShowSQL, func(f *models.Figures, a, _ int64) { f.NoShows = a }},
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
	for _, fq := range figureQueries {
		if err := db.figure(ctx, q, d, fq); err != nil {
			return nil, err
		}
	}
	if err := db.Gorm.WithContext(ctx).Table("priority_requests").Where("status = ?", models.RequestPending).Count(&d.PendingRequests).Error; err != nil {
		return nil, fmt.Errorf("store: report pending requests: %w", err)
	}
	if err := db.clusterHours(ctx, q, d); err != nil {
		return nil, err
	}
	var err error
	if d.Users, err = db.Users(ctx); err != nil {
		return nil, err
	}
	if d.Memberships, err = db.memberships(ctx, "m.team_id > ?", 0); err != nil {
		return nil, err
	}
	var gpus int64
	if err := db.Gorm.WithContext(ctx).Table("gpus").Where("in_service").Count(&gpus).Error; err != nil {
		return nil, fmt.Errorf("store: report gpus: %w", err)
	}
	d.GPUCount = int(gpus)
	return d, nil
}

func (db *DB) figure(ctx context.Context, q reportSQL, d *models.WeekData, fq figureQuery) error {
	args := map[string]any{}
	var rows []spanRow
	if err := db.Gorm.WithContext(ctx).Raw(fq.sql(q, args, d.Spans), args).Scan(&rows).Error; err != nil {
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

func (db *DB) clusterHours(ctx context.Context, q reportSQL, d *models.WeekData) error {
	args := map[string]any{}
	var rows []struct {
		I int   `gorm:"column:i"`
		H int64 `gorm:"column:h"`
		V int64 `gorm:"column:v"`
	}
	if err := db.Gorm.WithContext(ctx).Raw(q.clusterHoursSQL(args, d.Spans), args).Scan(&rows).Error; err != nil {
		return fmt.Errorf("store: report cluster hours: %w", err)
	}
	d.ClusterBusyMin = make([]int64, len(d.Spans))
	d.HourBusyMin = map[int64]int64{}
	for _, r := range rows {
		d.ClusterBusyMin[r.I] += r.V
		d.HourBusyMin[r.H] += r.V
	}
	return nil
}
