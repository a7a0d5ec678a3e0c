package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

type nodeRow struct {
	ID        int64     `gorm:"column:id;primaryKey"`
	Name      string    `gorm:"column:name"`
	CreatedAt time.Time `gorm:"column:created_at"`
	UpdatedAt time.Time `gorm:"column:updated_at"`
}

func (nodeRow) TableName() string { return "nodes" }

type gpuRow struct {
	ID                 int64     `gorm:"column:id;primaryKey"`
	NodeID             int64     `gorm:"column:node_id"`
	Index              int       `gorm:"column:idx"`
	UUID               string    `gorm:"column:uuid"`
	Model              string    `gorm:"column:model"`
	MemoryMiB          int64     `gorm:"column:memory_mib"`
	MIG                bool      `gorm:"column:mig"`
	InService          bool      `gorm:"column:in_service"`
	OutOfServiceReason string    `gorm:"column:out_of_service_reason"`
	CreatedAt          time.Time `gorm:"column:created_at"`
	UpdatedAt          time.Time `gorm:"column:updated_at"`
	ParentID           *int64    `gorm:"column:parent_id"`
	MIGProfile         string    `gorm:"column:mig_profile"`
	MIGSlices          int       `gorm:"column:mig_slices"`
	MIGGI              *int      `gorm:"column:mig_gi"`
	MIGCI              *int      `gorm:"column:mig_ci"`
	Weight             float64   `gorm:"column:weight;default:1"`
	NodeName           string    `gorm:"column:node_name;->"`
}

func (gpuRow) TableName() string { return "gpus" }

func (r gpuRow) model() models.GPU {
	return models.GPU{ID: r.ID, NodeID: r.NodeID, NodeName: r.NodeName, Index: r.Index, UUID: r.UUID, Model: r.Model,
		MemoryMiB: r.MemoryMiB, MIG: r.MIG, InService: r.InService, OutOfServiceReason: r.OutOfServiceReason,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		ParentID: deref(r.ParentID), MIGProfile: r.MIGProfile, MIGSlices: r.MIGSlices, MIGGI: deref(r.MIGGI), MIGCI: deref(r.MIGCI),
		Weight: r.Weight}
}

func (db *DB) gpuQuery(ctx context.Context) *gorm.DB {
	return db.Gorm.WithContext(ctx).Table("gpus g").Select("g.*, n.name AS node_name").
		Joins("JOIN nodes n ON n.id = g.node_id")
}

// GPUs returns every GPU, ordered by node name and index. The slice is
// shared with every caller (inventory.go): read it, never write into it.
func (db *DB) GPUs(ctx context.Context) ([]models.GPU, error) {
	_, gpus, err := db.inventoryNow(ctx)
	return gpus, err
}

// GPUsByID returns the GPUs of ids that exist, with their node's name, in
// one query: what a booking's answer on the API and a calendar feed name
// their GPUs by (reading every GPU of the cluster for it was a tenth of a
// booking's time).
func (db *DB) GPUsByID(ctx context.Context, ids []int64) (map[int64]models.GPU, error) {
	if len(ids) == 0 {
		return map[int64]models.GPU{}, nil
	}
	return gpusByID(db.Gorm.WithContext(ctx), ids)
}

// GPU returns the GPU with id.
func (db *DB) GPU(ctx context.Context, id int64) (*models.GPU, error) {
	var r gpuRow
	if err := db.gpuQuery(ctx).Where("g.id = ?", id).Take(&r).Error; err != nil {
		return nil, mapErr(err, "GPU")
	}
	g := r.model()
	return &g, nil
}

// Nodes returns every node with its GPUs, ordered by name. The slice is
// the caller's; each node's GPUs are shared with every caller
// (inventory.go): read them, never write into them.
func (db *DB) Nodes(ctx context.Context) ([]models.Node, error) {
	nodes, _, err := db.inventoryNow(ctx)
	if err != nil {
		return nil, err
	}
	return append([]models.Node(nil), nodes...), nil
}

// Node returns the node with id and its GPUs.
func (db *DB) Node(ctx context.Context, id int64) (*models.Node, error) {
	var r nodeRow
	if err := db.Gorm.WithContext(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return nil, mapErr(err, "node")
	}
	var rows []gpuRow
	if err := db.gpuQuery(ctx).Where("g.node_id = ?", id).Order("g.idx").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: node gpus: %w", err)
	}
	n := &models.Node{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	for _, g := range rows {
		n.GPUs = append(n.GPUs, g.model())
	}
	return n, nil
}

// CreateNode validates and inserts a node and its GPUs in one transaction.
func (db *DB) CreateNode(ctx context.Context, n *models.Node, gpus []models.GPU, by models.Actor) error {
	fe := models.FieldErrors{}
	if err := n.Validate(); err != nil {
		for k, v := range models.AsError(err).Fields {
			fe.Add(k, v)
		}
	}
	for i := range gpus {
		if err := gpus[i].Validate(); err != nil {
			for k, v := range models.AsError(err).Fields {
				fe.Add(k, v)
			}
		}
	}
	if err := fe.Err(); err != nil {
		return err
	}
	now := utc(time.Now())
	row := nodeRow{Name: n.Name, CreatedAt: now, UpdatedAt: now}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		for i := range gpus {
			g := gpuRow{NodeID: row.ID, Index: gpus[i].Index, UUID: gpus[i].UUID, Model: gpus[i].Model, MemoryMiB: gpus[i].MemoryMiB,
				MIG: gpus[i].MIG, InService: true, CreatedAt: now, UpdatedAt: now}
			if err := tx.Omit("node_name").Create(&g).Error; err != nil {
				return err
			}
			gpus[i].ID, gpus[i].NodeID, gpus[i].InService = g.ID, row.ID, true
		}
		return audit(tx, by, models.AuditNodeCreate, "node", row.ID, map[string]any{"name": n.Name, "gpus": len(gpus)})
	})
	if err != nil {
		return mapErr(err, "node")
	}
	n.ID, n.CreatedAt, n.UpdatedAt, n.GPUs = row.ID, now, now, gpus
	return nil
}

// RenameNode changes a node's name.
func (db *DB) RenameNode(ctx context.Context, id int64, name string, by models.Actor) error {
	n := models.Node{Name: name}
	if err := n.Validate(); err != nil {
		return err
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&nodeRow{}).Where("id = ?", id).Updates(map[string]any{"name": n.Name, "updated_at": utc(time.Now())})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return audit(tx, by, models.AuditNodeRename, "node", id, map[string]any{"name": n.Name})
	})
	return mapErr(err, "node")
}

// SetGPUService takes a GPU out of service (a reason is required) or back in.
func (db *DB) SetGPUService(ctx context.Context, id int64, inService bool, reason string, by models.Actor) error {
	fe := models.FieldErrors{}
	if fe.Check("reason", &reason, models.ReasonText) && !inService && reason == "" {
		fe.Add("reason", models.M("err.reason_required"))
	}
	if err := fe.Err(); err != nil {
		return err
	}
	if inService {
		reason = ""
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&gpuRow{}).Where("id = ?", id).Updates(map[string]any{"in_service": inService, "out_of_service_reason": reason, "updated_at": utc(time.Now())})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return audit(tx, by, models.AuditGPUService, "gpu", id, map[string]any{"in_service": inService, "reason": reason})
	})
	return mapErr(err, "GPU")
}
