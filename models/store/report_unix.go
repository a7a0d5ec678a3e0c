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
	var rows []struct {
		N string `gorm:"column:n"`
		A int64  `gorm:"column:a"`
	}
	args := map[string]any{}
	q.plan = days
	if err := g.Raw(q.unmappedSQL(args, lo, hi), args).Scan(&rows).Error; err != nil {
		return fmt.Errorf("store: report unmapped use: %w", err)
	}
	for _, r := range rows {
		d.Unmapped = append(d.Unmapped, models.UnixMinutes{Name: r.N, Minutes: r.A})
	}
	models.SortUnixMinutes(d.Unmapped)
	return nil
}
