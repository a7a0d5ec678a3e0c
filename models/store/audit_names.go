package store

import (
	"context"
	"fmt"

	"github.com/gpubook/gpubook/models"
)

// AuditNames looks up, in one query per kind, the names audit sentences
// show: a user's name, a team's, a node's, a GPU or MIG instance as
// "node GPU 3" or "node GPU 3 · 1g.10gb" (models.UnitName).
// Ids that no longer exist are left out; the sentence then shows "#id".
func (db *DB) AuditNames(ctx context.Context, ids map[string][]int64) (models.AuditNames, error) {
	out := models.AuditNames{}
	queries := map[string]string{
		models.RefUser: "SELECT id, name FROM users WHERE id IN ?",
		models.RefTeam: "SELECT id, name FROM teams WHERE id IN ?",
		models.RefNode: "SELECT id, name FROM nodes WHERE id IN ?",
		models.RefGPU: "SELECT g.id AS id, n.name AS name, " + unitSQL +
			" FROM gpus g JOIN nodes n ON n.id = g.node_id LEFT JOIN gpus p ON p.id = g.parent_id WHERE g.id IN ?",
	}
	for kind, list := range ids {
		q, ok := queries[kind]
		if !ok || len(list) == 0 {
			continue
		}
		var rows []auditNameRow
		for start := 0; start < len(list); start += 500 {
			chunk := list[start:min(start+500, len(list))]
			var part []auditNameRow
			if err := db.Gorm.WithContext(ctx).Raw(q, chunk).Scan(&part).Error; err != nil {
				return nil, fmt.Errorf("store: audit names of %ss: %w", kind, err)
			}
			rows = append(rows, part...)
		}
		out[kind] = make(map[int64]string, len(rows))
		for _, r := range rows {
			out[kind][r.ID] = r.Name
			if kind == models.RefGPU {
				out[kind][r.ID] = r.Name + " " + r.Unit.name()
			}
		}
	}
	return out, nil
}

// auditNameRow is a named thing; a GPU's row adds its unit's columns.
type auditNameRow struct {
	ID   int64    `gorm:"column:id"`
	Name string   `gorm:"column:name"`
	Unit unitCols `gorm:"embedded"`
}
