package store

import "github.com/gpubook/gpubook/models"

// unitSQL selects what models.UnitName needs of the unit g (and its GPU p,
// LEFT JOINed on g.parent_id), for a row scanned into unitCols.
const unitSQL = "g.idx AS unit_idx, g.parent_id AS unit_parent_id, p.idx AS unit_parent_idx, g.mig_profile AS unit_profile"

// unitCols is a unit's columns as unitSQL selects them.
type unitCols struct {
	Idx       int    `gorm:"column:unit_idx"`
	ParentID  *int64 `gorm:"column:unit_parent_id"`
	ParentIdx *int   `gorm:"column:unit_parent_idx"`
	Profile   string `gorm:"column:unit_profile"`
}

// name is the unit's name by models.UnitName: "GPU 3", "GPU 3 · 1g.10gb".
func (u unitCols) name() string { return unitName(u.Idx, u.ParentID, u.ParentIdx, u.Profile) }

// unitName names a unit read from SQL by models.UnitName, so that the
// store's names (conflicts, audit sentences, service notices) read like
// the calendar's.
func unitName(idx int, parentID *int64, parentIdx *int, profile string) string {
	g := models.GPU{Index: idx, MIGProfile: profile}
	if parentID != nil {
		g.ParentID = *parentID
	}
	p := -1
	if parentIdx != nil {
		p = *parentIdx
	}
	return models.UnitName(g, p)
}
