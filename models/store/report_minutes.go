package store

import (
	"fmt"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// minutesFigures reads the figures of the one pass over the GPU-minutes
// (minutesSQL): each user's busy, held-idle and no-per-user-data minutes
// and no-shows, and the cluster's busy minutes per span and UTC hour.
func minutesFigures(g *gorm.DB, q reportSQL, d *models.WeekData) error {
	d.ClusterBusyMin = make([]int64, len(d.Spans))
	d.ClusterUnbookedMin = make([]int64, len(d.Spans))
	d.HourBusyMin = map[int64]int64{}
	if lo, hi := bounds(d.Spans); !lo.Before(hi) {
		return nil // nothing of the week has happened yet
	}
	args := map[string]any{}
	var rows []minutesRow
	if err := g.Raw(q.minutesSQL(args, d.Spans), args).Scan(&rows).Error; err != nil {
		return fmt.Errorf("store: report minutes: %w", err)
	}
	// The cluster's rows are unit-minutes per (span, UTC hour), rounded
	// to GPU-minutes only once summed, not per hour.
	hourUnits := map[int64]int64{}
	spanUnits := make([]int64, len(d.Spans))
	for _, r := range rows {
		if r.Kind == "c" {
			spanUnits[r.I] += r.A
			hourUnits[r.H] += r.A
		}
	}
	userFigures(d, rows, q.rolled)
	if q.rolled != nil {
		unbooked := map[int]int64{}
		for _, r := range q.rolled.hours {
			spanUnits[r.I] += r.A
			hourUnits[r.H] += r.A
			unbooked[r.I] += r.B
		}
		// The rolled hours' unbooked minutes, rounded per span.
		for i, u := range unbooked {
			d.ClusterUnbookedMin[i] += unitsToGPUs(u)
		}
	}
	for i, u := range spanUnits {
		d.ClusterBusyMin[i] = unitsToGPUs(u)
	}
	for h, u := range hourUnits {
		d.HourBusyMin[h] = unitsToGPUs(u)
	}
	return nil
}

// minutesRow is a row of minutesSQL.
type minutesRow struct {
	Kind string `gorm:"column:kind"`
	UID  int64  `gorm:"column:uid"`
	I    int    `gorm:"column:i"`
	H    int64  `gorm:"column:h"`
	A    int64  `gorm:"column:a"`
	B    int64  `gorm:"column:b"`
	C    int64  `gorm:"column:c"`
	D    int64  `gorm:"column:d"`
	E    int64  `gorm:"column:e"`
	F    int64  `gorm:"column:f"`
	G    int64  `gorm:"column:g"`
}

// userFigures adds minutesSQL's user rows and the rolled part's sums per
// (booking, span) to d. The busy, held-idle and no-data minutes are
// unit-minutes, rounded to GPU-minutes once per (user, span), both parts
// added.
func userFigures(d *models.WeekData, rows []minutesRow, rolled *rolledPart) {
	type userSpan struct {
		uid int64
		i   int
	}
	units := map[userSpan]*[3]int64{}
	user := func(uid int64, i int) (*models.Figures, *[3]int64) {
		figs, ok := d.ByUser[uid]
		if !ok {
			figs = make([]models.Figures, len(d.Spans))
			d.ByUser[uid] = figs
		}
		u, ok := units[userSpan{uid, i}]
		if !ok {
			u = &[3]int64{}
			units[userSpan{uid, i}] = u
		}
		return &figs[i], u
	}
	for _, r := range rows {
		if r.Kind != "u" {
			continue
		}
		f, u := user(r.UID, r.I)
		u[0], u[1], u[2] = u[0]+r.A, u[1]+r.C, u[2]+r.D
		f.NoShows, f.UtilMin, f.UtilTenths, f.LowIntensity = f.NoShows+r.B, f.UtilMin+r.E, f.UtilTenths+r.F, f.LowIntensity+r.G
	}
	if rolled != nil {
		for _, r := range rolled.per {
			f, u := user(r.UID, int(r.I))
			u[0], u[1], u[2] = u[0]+r.WBusy, u[1]+r.WHeld, u[2]+r.WNoData
			f.UtilMin, f.UtilTenths = f.UtilMin+r.UtilN, f.UtilTenths+r.UtilSum
		}
	}
	for k, u := range units {
		f := &d.ByUser[k.uid][k.i]
		f.BusyMin += unitsToGPUs(u[0])
		f.HeldIdleMin += unitsToGPUs(u[1])
		f.NoUserDataMin += unitsToGPUs(u[2])
	}
}
