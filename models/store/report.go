package store

import (
	"context"
	"fmt"
	"sort"
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
	// rolled, when set, is the figure's part of the rolled hours, which
	// sql leaves out.
	rolled func(*rolledPart) []spanRow
}

// figureQueries lists the per-user figures the database computes from the
// bookings and the user rows; minutesFigures adds those read from the
// GPU-minutes. Each is defined once, in report_sql.go; the email, the
// pages and the CSV all read them through ReportWeek.
var figureQueries = []figureQuery{
	{"booked", reportSQL.bookedSQL, func(f *models.Figures, a, _ int64) { f.BookedSec = a }, nil},
	{"unbooked", reportSQL.unbookedSQL, func(f *models.Figures, a, _ int64) { f.UnbookedMin = a }, func(p *rolledPart) []spanRow { return p.unbooked }},
	{"given back", reportSQL.givenBackSQL, func(f *models.Figures, a, b int64) { f.GivenBackSec, f.AutoGivenBackSec = a, b }, nil},
	{"priority", reportSQL.prioritySQL, func(f *models.Figures, a, b int64) { f.PriorityMade, f.PriorityApproved = a, b }, nil},
	{"pre-empted", reportSQL.preemptedSQL, func(f *models.Figures, a, _ int64) { f.Preempted = a }, nil},
	{"late cancels", reportSQL.lateCancelSQL, func(f *models.Figures, a, b int64) { f.LateCancelSec, f.LateCancels = a, b }, nil},
}

// ReportWeek computes week w for every user as of asOf (the end of the
// week for a finished one, now for the week in progress), every span from
// the usage: the trend weeks too, whether frozen or not (a recompute). The
// work is a handful of aggregate queries whatever the number of users; no
// per-minute row leaves the database.
func (db *DB) ReportWeek(ctx context.Context, w models.Week, asOf time.Time, rules models.ReportRules) (*models.WeekData, error) {
	return db.reportWeek(ctx, w, asOf, rules, false)
}

// reportWeek is ReportWeek; with snapshots, the trend weeks that are
// frozen are read from their snapshots (frozenTrend) and only the rest is
// computed from the usage.
func (db *DB) reportWeek(ctx context.Context, w models.Week, asOf time.Time, rules models.ReportRules, snapshots bool) (*models.WeekData, error) {
	rules = rules.OrDefault()
	spans := models.ReportSpans(w, asOf)
	d := &models.WeekData{Week: w, AsOf: asOf, Spans: spans, ByUser: map[int64][]models.Figures{}, Rules: rules}
	q := reportSQL{pg: db.Dialect == Postgres, rules: rules}
	err := db.reportSnapshot(ctx, func(g *gorm.DB) error {
		r, err := db.reportRead(g, q, w, spans, snapshots)
		if err != nil {
			return err
		}
		d.Spans = r.spans
		if err := reportFigures(g, r.q, d, r.plan, db.rolled); err != nil {
			return err
		}
		d.Spans = spans
		for i, t := range r.frozen {
			d.FillTrend(i, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// reportRead is how a report reads week w's spans in one snapshot: the
// spans read from the usage (those of the trend weeks read from their
// snapshots emptied), those snapshots, the read plan of any spans, and
// q with the plan of the spans read.
type reportRead struct {
	q      reportSQL
	spans  []models.Span
	frozen map[int]*models.TrendWeek
	plan   func([]models.Span) *models.UsageReadPlan
}

// reportRead plans the read of spans in g's snapshot; with snapshots,
// the trend weeks that are frozen are read from their snapshots.
func (db *DB) reportRead(g *gorm.DB, q reportSQL, w models.Week, spans []models.Span, snapshots bool) (reportRead, error) {
	planner, rolledTo, err := reportPlanner(g, q.rules.BusyUtilPct)
	if err != nil {
		return reportRead{}, err
	}
	var r reportRead
	if snapshots {
		if r.frozen, err = frozenTrend(g, db.trends, q.pg, w, rolledTo); err != nil {
			return reportRead{}, err
		}
	}
	r.spans = models.SkipSpans(spans, r.frozen)
	var skipped []models.Span
	for i := range r.frozen {
		skipped = append(skipped, spans[i])
	}
	if len(skipped) > 0 {
		q.noShowsFrom, _ = bounds(spans)
		_, q.noShowsTo = bounds(skipped)
		q.noShowsSkipped = skipped
	}
	r.plan = func(s []models.Span) *models.UsageReadPlan {
		p := planner(s).Without(skipped)
		return &p
	}
	q.plan = r.plan(r.spans)
	r.q = q
	return r, nil
}

// reportFigures runs the report's queries for d.Spans, in g's snapshot,
// the part of the rolled hours kept in rolled or read into it.
func reportFigures(g *gorm.DB, q reportSQL, d *models.WeekData, plan func([]models.Span) *models.UsageReadPlan, rolled *rolledWeeks) error {
	var err error
	if lo, hi := bounds(d.Spans); lo.Before(hi) {
		if q.rolled, err = rolled.read(g, q, d.Spans, q.plan, plan(d.Spans[:models.ReportDays])); err != nil {
			return err
		}
	} else {
		q.rolled = &rolledPart{}
	}
	for _, fq := range figureQueries {
		if err := figure(g, q, d, fq); err != nil {
			return err
		}
	}
	if err := minutesFigures(g, q, d); err != nil {
		return err
	}
	if err := unbookedFigures(g, q, plan(d.Spans[:models.ReportDays]), d); err != nil {
		return err
	}
	if err := unmappedUse(g, q, plan(d.Spans[:models.ReportDays]), d); err != nil {
		return err
	}
	if err := reportContext(g, d); err != nil {
		return err
	}
	// Users and teams from the same snapshot as the figures, so that
	// a user added mid-run is either in both or in neither.
	if d.Users, err = listUsers(g); err != nil {
		return err
	}
	if d.Memberships, err = listMemberships(g, "m.team_id > ?", 0); err != nil {
		return err
	}
	d.NameUsedBy()
	return nil
}

// reportSnapshot runs the report's queries. On PostgreSQL they share one
// read-only REPEATABLE READ snapshot, so that usage arriving mid-run
// cannot make the figures disagree, JIT compilation is off: it costs
// more per query here than the short aggregates it would speed up, and
// work_mem is reportWorkMem: at the default 4 MB the bookings' sums of a
// week at 512 GPUs were sorted on disk instead of hashed (a quarter of
// the pass over the hourly sums). SQLite runs them as they are (a
// transaction there would take the write lock).
// reportWorkMem is the report's work_mem on PostgreSQL (reportSnapshot).
const reportWorkMem = "32MB"

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
		if err := tx.Exec("SET LOCAL work_mem = '" + reportWorkMem + "'").Error; err != nil {
			return fmt.Errorf("store: report snapshot: %w", err)
		}
		return fn(tx)
	})
}

// reportContext counts what the cluster summary needs besides the figures.
func reportContext(g *gorm.DB, d *models.WeekData) error {
	// Pending as the week ended: made before its end and not yet decided,
	// expired or withdrawn then — not "pending when the week was frozen".
	end := utc(d.Week.End)
	pending := g.Table("priority_requests").Where("created_at < ?", end).
		Where("status = ? OR (status IN ? AND decided_at >= ?) OR (status IN ? AND updated_at >= ?)",
			models.RequestPending, []string{models.RequestApproved, models.RequestDenied}, end,
			[]string{models.RequestExpired, models.RequestWithdrawn}, end)
	if err := pending.Count(&d.PendingRequests).Error; err != nil {
		return fmt.Errorf("store: report pending requests: %w", err)
	}
	var gpus int64
	// The capacity counts physical GPUs: a GPU split into MIG instances
	// is one GPU-equivalent, its instances together (their weights).
	if err := g.Table("gpus").Where("in_service AND parent_id IS NULL").Count(&gpus).Error; err != nil {
		return fmt.Errorf("store: report gpus: %w", err)
	}
	d.GPUCount = int(gpus)
	var weights []struct {
		ID     int64   `gorm:"column:id"`
		Weight float64 `gorm:"column:share_weight"`
	}
	if err := g.Table("teams").Select("id, share_weight").Scan(&weights).Error; err != nil {
		return fmt.Errorf("store: report team weights: %w", err)
	}
	d.TeamWeights = map[int64]float64{}
	for _, t := range weights {
		d.TeamWeights[t.ID] = t.Weight
	}
	return comingBookings(g, d)
}

// comingBookings reads the confirmed bookings' GPU ranges in the week
// after d.Week, for the quiet-hours advice (bookings, not minutes: few rows).
// A booking's GPUs end by its end, so b.ends_at bounds the bookings read
// through their index: without it SQLite read every confirmed booking's
// GPUs, 35 ms of a usage view at 512 GPUs × 4 weeks (0.07 ms so).
func comingBookings(g *gorm.DB, d *models.WeekData) error {
	next := d.Week.Next()
	var rows []struct {
		StartsAt time.Time `gorm:"column:starts_at"`
		EndsAt   time.Time `gorm:"column:ends_at"`
	}
	err := g.Table("booking_gpus bg").Select("bg.starts_at, bg.ends_at").Joins("JOIN bookings b ON b.id = bg.booking_id").
		Where("b.status = ? AND b.ends_at > ? AND bg.starts_at < ? AND bg.ends_at > ?", models.StatusConfirmed, utc(next.Start), utc(next.End), utc(next.Start)).
		Scan(&rows).Error
	if err != nil {
		return fmt.Errorf("store: report coming bookings: %w", err)
	}
	for _, r := range rows {
		d.Coming = append(d.Coming, models.Span{Start: r.StartsAt, End: r.EndsAt})
	}
	return nil
}

// unbookedFigures reads the cluster's unbooked GPU-minutes (each once) and,
// per booker, who else used their bookings in the week. Both read the
// partial index of unbooked user rows, which are few.
func unbookedFigures(g *gorm.DB, q reportSQL, days *models.UsageReadPlan, d *models.WeekData) error {
	d.UsedBy = map[int64][]models.UserMinutes{}
	lo, hi := bounds(d.Spans)
	if !lo.Before(hi) {
		return nil
	}
	args := map[string]any{}
	var rows []spanRow
	// The rolled hours' part came with minutesFigures; the minutes' is
	// read when the plan reads any.
	if q.plan == nil || len(q.plan.Minutes) > 0 {
		if err := g.Raw(q.clusterUnbookedSQL(args, d.Spans), args).Scan(&rows).Error; err != nil {
			return fmt.Errorf("store: report cluster unbooked: %w", err)
		}
	}
	for _, r := range rows {
		d.ClusterUnbookedMin[r.I] += r.A
	}
	wlo, whi := bounds(d.Spans[:models.ReportDays])
	if !wlo.Before(whi) {
		return nil
	}
	args, rows = map[string]any{}, nil
	rolled := q.rolled
	q.plan, q.rolled = days, nil
	if q.plan == nil || len(q.plan.Minutes) > 0 {
		if err := g.Raw(q.usedBySQL(args, wlo, whi), args).Scan(&rows).Error; err != nil {
			return fmt.Errorf("store: report used by: %w", err)
		}
	}
	if rolled != nil {
		rows = addRows(rows, rolled.usedBy, true)
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].UID < rows[j].UID || rows[i].UID == rows[j].UID && rows[i].A < rows[j].A
	})
	for _, r := range rows {
		d.UsedBy[r.UID] = append(d.UsedBy[r.UID], models.UserMinutes{UserID: r.A, Minutes: r.B})
	}
	return nil
}

func figure(g *gorm.DB, q reportSQL, d *models.WeekData, fq figureQuery) error {
	args := map[string]any{}
	var rows []spanRow
	if err := g.Raw(fq.sql(q, args, d.Spans), args).Scan(&rows).Error; err != nil {
		return fmt.Errorf("store: report %s: %w", fq.name, err)
	}
	if fq.rolled != nil && q.rolled != nil {
		rows = addRows(rows, fq.rolled(q.rolled), false)
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
