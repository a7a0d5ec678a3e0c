package store

import (
	"fmt"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// unmappedUse reads the week's use by Unix accounts that map to no
// gpubook user (unmappedSQL), by name, most first; days plans the read of
// the week's days.
func unmappedUse(g *gorm.DB, q reportSQL, days *models.UsageReadPlan, d *models.WeekData) error {
	lo, hi := bounds(d.Spans[:models.ReportDays])
	if !lo.Before(hi) {
		return nil
	}
	var rows []unixRow
	args := map[string]any{}
	q.plan = days
	if days == nil || len(days.Minutes) > 0 {
		if err := g.Raw(q.unmappedSQL(args, lo, hi), args).Scan(&rows).Error; err != nil {
			return fmt.Errorf("store: report unmapped use: %w", err)
		}
	}
	if q.rolled != nil {
		rows = append(rows, q.rolled.unmapped...)
	}
	at := map[string]int{}
	for _, r := range rows {
		if i, ok := at[r.N]; ok {
			d.Unmapped[i].Minutes += r.A
			continue
		}
		at[r.N] = len(d.Unmapped)
		d.Unmapped = append(d.Unmapped, models.UnixMinutes{Name: r.N, Minutes: r.A})
	}
	models.SortUnixMinutes(d.Unmapped)
	return nil
}
