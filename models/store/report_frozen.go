package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gpubook/gpubook/models"
)

// auditTargetWeek is the audit target type of a recompute; the target id
// is the week's name.
const auditTargetWeek = "report_week"

// reportWeekRow is one frozen week (migration 00015).
type reportWeekRow struct {
	Week     string    `gorm:"column:week;primaryKey"`
	Version  int       `gorm:"column:version"`
	Data     string    `gorm:"column:data"`
	FrozenAt time.Time `gorm:"column:frozen_at"`
	FrozenBy string    `gorm:"column:frozen_by"`
}

func (reportWeekRow) TableName() string { return "report_weeks" }

func (r reportWeekRow) model() models.FrozenWeek {
	return models.FrozenWeek{Week: r.Week, Version: r.Version, Data: []byte(r.Data), FrozenAt: r.FrozenAt.UTC(), FrozenBy: r.FrozenBy}
}

func frozenRow(f models.FrozenWeek) reportWeekRow {
	return reportWeekRow{Week: f.Week, Version: f.Version, Data: string(f.Data), FrozenAt: utc(f.FrozenAt), FrozenBy: f.FrozenBy}
}

// ReportWeekAt returns week w as every surface shows it at now: live as of
// now while it runs (or as of the start of the same computation already
// running for another view: liveWeek); once ended, its snapshot if one exists; else computed
// as of its end and, when freeze is asked (the weekly send) or the week
// ended FreezeAfter ago, frozen first. Two replicas freezing at once both
// insert-or-ignore and then read the one row that won, so they agree.
func (db *DB) ReportWeekAt(ctx context.Context, w models.Week, now time.Time, rules models.ReportRules, freeze bool) (*models.WeekData, error) {
	if now.Before(w.End) {
		return db.liveWeek(ctx, w, now, rules)
	}
	if d, err := db.frozenWeek(ctx, w); err == nil || !errors.Is(err, gorm.ErrRecordNotFound) {
		return d, err
	}
	d, err := db.reportWeek(ctx, w, w.End, rules, true)
	if err != nil {
		return nil, err
	}
	d.State = models.WeekEnded
	if !freeze && now.Before(w.End.Add(models.FreezeAfter)) {
		return d, nil
	}
	// A week before the portal's first booking or usage is never frozen
	// (models.WeekBeforePortal): history imported later must count in it.
	if first, ok, err := db.FirstActivity(ctx); err != nil {
		return nil, err
	} else if models.WeekBeforePortal(w, first, ok) {
		return d, nil
	}
	by := models.FrozenByRead
	if freeze {
		by = models.FrozenBySend
	}
	f, err := models.FreezeWeek(d, now, by)
	if err != nil {
		return nil, err
	}
	row := frozenRow(f)
	if err := db.Gorm.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return nil, fmt.Errorf("store: freeze week %s: %w", w, err)
	}
	return db.frozenWeek(ctx, w)
}

// frozenWeek reads w's snapshot; gorm.ErrRecordNotFound when there is none.
func (db *DB) frozenWeek(ctx context.Context, w models.Week) (*models.WeekData, error) {
	var row reportWeekRow
	err := db.Gorm.WithContext(ctx).Where("week = ?", w.String()).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("store: frozen week %s: %w", w, err)
	}
	return row.model().Thaw(w)
}

// frozenTrend reads the snapshots of w's trend weeks, by span index
// (models.TrendSpan). A week is left to be computed when it has no
// snapshot, when its snapshot cannot be read (another layout, damaged:
// logged), or when the hours up to its end are not all rolled (rolledTo):
// the no-shows of bookings that began in it are told from the rollups.
// For the same reason no week is read from its snapshot while any hour of
// the report's four weeks has minutes the rollups do not hold yet (late
// minutes, restamps: models.TrendFromSnapshots); the report then reads
// every week's usage, those hours from their minutes, so a week frozen
// then is what a recomputation from complete data gives (issue 37).
func frozenTrend(g *gorm.DB, c *trendCache, pg bool, w models.Week, rolledTo int64) (map[int]*models.TrendWeek, error) {
	dirty, err := readDirtyHours(g)
	if err != nil {
		return nil, err
	}
	if !models.TrendFromSnapshots(w, dirty) {
		return nil, nil
	}
	names, spans := map[string]models.Week{}, map[string]int{}
	for k := 1; k < models.TrendWeeks; k++ {
		if p := w.Prev(k); !models.HourStart(rolledTo).Before(p.End) {
			names[p.String()], spans[p.String()] = p, models.TrendSpan(k)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	weeks, err := trendWeeks(g, c, pg, names)
	if err != nil {
		return nil, fmt.Errorf("store: frozen trend of %s: %w", w, err)
	}
	out := map[int]*models.TrendWeek{}
	for n, t := range weeks {
		out[spans[n]] = t
	}
	return out, nil
}

// RecomputeWeek computes the ended week w afresh from today's bookings,
// usage, users, teams and GPUs, replaces its snapshot and writes one audit
// event with every figure diff lists as changed (the cells the surfaces
// show differently): the deliberate way to change a week that was already
// reported. before is nil when w was not frozen yet.
func (db *DB) RecomputeWeek(ctx context.Context, w models.Week, now time.Time, rules models.ReportRules, by models.Actor,
	diff models.WeekDiff) (before, after *models.WeekData, changes []models.FigureChange, err error) {
	if now.Before(w.End) {
		return nil, nil, nil, models.NewError(models.EINVALID, models.M("err.report_week_running", "Week", w.String()))
	}
	after, err = db.ReportWeek(ctx, w, w.End, rules)
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := models.FreezeWeek(after, now, by.Label)
	if err != nil {
		return nil, nil, nil, err
	}
	// The week as every surface will read it back: the snapshot, not the
	// copy computed (the diff compares what the surfaces show).
	if after, err = f.Thaw(w); err != nil {
		return nil, nil, nil, err
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var old reportWeekRow
		switch err := tx.Where("week = ?", w.String()).Take(&old).Error; {
		case err == nil:
			if before, err = old.model().Thaw(w); err != nil {
				return err
			}
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return fmt.Errorf("store: recompute week %s: %w", w, err)
		}
		row := frozenRow(f)
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
			return fmt.Errorf("store: recompute week %s: %w", w, err)
		}
		changes = diff(before, after)
		ev, err := newAuditRow(by, models.AuditReportRecompute, auditTargetWeek, 0, map[string]any{
			"week": w.String(), "was_frozen": before != nil, "changed": len(changes), "changes": changes})
		if err != nil {
			return err
		}
		ev.TargetID = w.String()
		return mapErr(tx.Create(&ev).Error, "audit recompute")
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return before, after, changes, nil
}
