package store

import (
	"fmt"

	"github.com/gpubook/gpubook/models"
)

// Every report figure in GPU-hours counts an hour of a unit as its weight
// in GPU-hours (docs/reports.md, "MIG slices"): a whole GPU weighs 1, a
// MIG instance its slices over its GPU's (1/7 for a 1g.10gb of an A100).
// The weight is applied where the report's SQL sums seconds or minutes,
// on read: the per-minute rows and the hourly rollups stay per unit, and
// a frozen week's snapshot keeps the figures it was sent with. The sums
// are taken in models.WeightUnits per unit (exact for every share an
// instance can have) and rounded once per (user, span), so that seven
// hours on a 1g slice are exactly one GPU-hour. Utilisation is per unit
// and never weighted.

// units is the weight of the gpus row g in models.WeightUnits, as an
// integer: WeightUnits for a whole GPU. It is a 4-byte integer on
// PostgreSQL, so that its sums and its products with the hourly rollups'
// minutes (at most 60) take the fast 8-byte sum, not a numeric one (a
// third of the pass over the hourly sums); a product with a length in
// seconds is an 8-byte integer as before.
func units(g string) string {
	return fmt.Sprintf("CAST(ROUND(%s.weight * %d) AS INTEGER)", g, models.WeightUnits)
}

// weighed is a sum of unit-seconds or unit-minutes (units times the
// length) as whole GPU-seconds or GPU-minutes, rounded half up.
func weighed(sum string) string {
	return fmt.Sprintf("((CAST(%s AS BIGINT) + %d) / %d)", sum, models.WeightUnits/2, models.WeightUnits)
}

// weighedCount is SUM(CASE WHEN pred THEN units(g) ELSE 0 END): the
// unit-minutes of the rows that meet pred, for weighed.
func weighedCount(pred, g string) string {
	return "SUM(CASE WHEN " + pred + " THEN " + units(g) + " ELSE 0 END)"
}

// unitsToGPUs is weighed in Go: unit-minutes as GPU-minutes, rounded half up.
func unitsToGPUs(u int64) int64 { return (u + models.WeightUnits/2) / models.WeightUnits }
