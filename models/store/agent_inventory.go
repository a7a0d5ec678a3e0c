package store

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// parkedIndex moves a node's GPU indices out of the way while an inventory
// reassigns them, so that UNIQUE (node_id, idx) never sees two GPUs on one
// index in the middle of the transaction.
const parkedIndex = 100000

// ApplyInventory makes the node's GPUs match what its agent reports: a
// known UUID is updated, a hand-registered placeholder (GPU-manual-…) at the
// same index takes the real UUID, anything else is added. A GPU the agent
// no longer reports is marked out of service and never deleted: bookings
// and usage refer to it. A UUID that belongs to another node refuses the
// whole report (403, nothing written). A GPU's MIG instances are applied
// after its row (agent_inventory_mig.go).
func (db *DB) ApplyInventory(ctx context.Context, nodeID int64, inv wire.Inventory, now time.Time) (models.InventoryResult, error) {
	var res models.InventoryResult
	if err := models.AgentError(inv.Validate()); err != nil {
		return res, err
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var all []gpuRow
		if err := tx.Where("node_id = ?", nodeID).Order("idx").Find(&all).Error; err != nil {
			return err
		}
		if err := refuseForeign(tx, nodeID, inv.GPUs); err != nil {
			return err
		}
		mine, instances := splitInstances(all)
		plan := planInventory(mine, inv.GPUs)
		res = plan.result
		// Only whole GPUs move: an instance keeps its index for good.
		if err := tx.Model(&gpuRow{}).Where("node_id = ? AND parent_id IS NULL", nodeID).Update("idx", gorm.Expr("idx + ?", parkedIndex)).Error; err != nil {
			return err
		}
		if err := plan.apply(tx, nodeID, utc(now)); err != nil {
			return err
		}
		if err := applyInstances(tx, nodeID, mine, instances, inv.GPUs, now); err != nil {
			return err
		}
		t := utc(now)
		if err := tx.Model(&agentNodeRow{}).Where("node_id = ?", nodeID).Updates(map[string]any{"inventory_at": t,
			"agent_version": clip(inv.AgentVersion, 100), "driver_version": clip(inv.DriverVersion, 100), "updated_at": t}).Error; err != nil {
			return err
		}
		return audit(tx, models.Actor{Label: "agent"}, auditInventory, "node", nodeID, res)
	})
	if err != nil {
		return models.InventoryResult{}, mapErr(err, "GPU")
	}
	return res, nil
}

// refuseForeign fails when any reported UUID (a GPU's or an instance's) is
// already another node's.
func refuseForeign(tx *gorm.DB, nodeID int64, gpus []wire.GPU) error {
	if len(gpus) == 0 {
		return nil
	}
	uuids := make([]string, 0, len(gpus))
	for _, g := range gpus {
		uuids = append(uuids, g.UUID)
		for _, m := range g.Instances {
			uuids = append(uuids, m.UUID)
		}
	}
	var foreign []string
	if err := tx.Model(&gpuRow{}).Where("uuid IN ? AND node_id <> ?", uuids, nodeID).Order("uuid").Pluck("uuid", &foreign).Error; err != nil {
		return err
	}
	if len(foreign) > 0 {
		return models.ErrForeignGPU(foreign[0])
	}
	return nil
}

type inventoryPlan struct {
	updates []gpuRow // existing rows with their new values
	inserts []gpuRow
	missing []gpuRow // not reported: parked above the reported indices
	result  models.InventoryResult
}

// planInventory matches reported GPUs to the node's rows.
func planInventory(mine []gpuRow, reported []wire.GPU) inventoryPlan {
	var p inventoryPlan
	byUUID := map[string]int{}
	placeholder := map[int]int{}
	for i, g := range mine {
		byUUID[g.UUID] = i
		if strings.HasPrefix(g.UUID, "GPU-manual-") {
			placeholder[g.Index] = i
		}
	}
	used := make([]bool, len(mine))
	top := -1
	for _, g := range reported {
		top = max(top, g.Index)
		i, ok := byUUID[g.UUID]
		if !ok {
			if j, ph := placeholder[g.Index]; ph && !used[j] {
				i, ok = j, true
				p.result.Replaced++
			}
		} else {
			p.result.Updated++
		}
		row := gpuRow{UUID: g.UUID, Index: g.Index, Model: clip(strings.TrimSpace(g.Model), 100), MemoryMiB: g.MemoryMiB, MIG: g.MIG,
			MIGSlices: parentSlices(g), InService: true}
		if !ok {
			p.inserts = append(p.inserts, row)
			p.result.Added++
			continue
		}
		used[i] = true
		old := mine[i]
		row.ID = old.ID
		row.InService, row.OutOfServiceReason = old.InService, old.OutOfServiceReason
		if !old.InService && old.OutOfServiceReason == models.NotReportedReason {
			row.InService, row.OutOfServiceReason = true, "" // it came back
		}
		p.updates = append(p.updates, row)
	}
	for i, g := range mine {
		if !used[i] {
			top++
			g.Index = top
			p.missing = append(p.missing, g)
			p.result.Missing++
		}
	}
	sort.Slice(p.inserts, func(i, j int) bool { return p.inserts[i].Index < p.inserts[j].Index })
	return p
}

func (p inventoryPlan) apply(tx *gorm.DB, nodeID int64, now time.Time) error {
	for _, g := range p.updates {
		if err := tx.Model(&gpuRow{}).Where("id = ?", g.ID).Updates(map[string]any{"uuid": g.UUID, "idx": g.Index,
			"model": g.Model, "memory_mib": g.MemoryMiB, "mig": g.MIG, "mig_slices": g.MIGSlices, "in_service": g.InService,
			"out_of_service_reason": g.OutOfServiceReason, "updated_at": now}).Error; err != nil {
			return fmt.Errorf("store: inventory update: %w", err)
		}
	}
	for _, g := range p.missing {
		up := map[string]any{"idx": g.Index, "updated_at": now}
		if g.InService {
			up["in_service"], up["out_of_service_reason"] = false, models.NotReportedReason
		}
		if err := tx.Model(&gpuRow{}).Where("id = ?", g.ID).Updates(up).Error; err != nil {
			return fmt.Errorf("store: inventory missing: %w", err)
		}
	}
	for _, g := range p.inserts {
		g.NodeID, g.CreatedAt, g.UpdatedAt = nodeID, now, now
		if err := tx.Omit("node_name").Create(&g).Error; err != nil {
			return fmt.Errorf("store: inventory add: %w", err)
		}
	}
	return nil
}

// AgentSchedule returns the node's confirmed bookings that overlap the
// schedule window at now, and its ETag.
func (db *DB) AgentSchedule(ctx context.Context, nodeID int64, now time.Time) (wire.Schedule, string, error) {
	node, err := db.Node(ctx, nodeID)
	if err != nil {
		return wire.Schedule{}, "", err
	}
	from, until := models.ScheduleWindow(now)
	bs, err := db.Bookings(ctx, models.BookingFilter{NodeID: nodeID, From: from, To: until})
	if err != nil {
		return wire.Schedule{}, "", err
	}
	uuid := map[int64]string{}
	for _, g := range node.GPUs {
		uuid[g.ID] = g.UUID
	}
	ids := make([]int64, len(bs))
	for i, b := range bs {
		ids[i] = b.UserID
	}
	logins, err := db.unixLogins(ctx, ids)
	if err != nil {
		return wire.Schedule{}, "", err
	}
	out := wire.Schedule{Node: node.Name, GeneratedAt: utc(now), From: from, Until: until, Bookings: []wire.Booking{}}
	for _, b := range bs {
		// The node learns logins only, never e-mail addresses. A booking
		// whose owner has no login of their own is left out: its GPUs then
		// count as unbooked rather than opening someone else's login.
		if logins[b.UserID] == "" {
			slog.WarnContext(ctx, "booking left out of the agent schedule: its user has no unix login of their own", "booking", b.ID, "user", b.UserID)
			continue
		}
		ab := wire.Booking{ID: b.ID, User: logins[b.UserID],
			StartsAt: b.StartsAt, EndsAt: b.EndsAt, Kind: b.Kind, GPUUUIDs: []string{}}
		for _, id := range b.GPUIDs {
			if u, ok := uuid[id]; ok && wire.ValidGPUUUID(u) {
				ab.GPUUUIDs = append(ab.GPUUUIDs, u)
			}
		}
		out.Bookings = append(out.Bookings, ab)
	}
	return out, models.ScheduleETag(out.Bookings), nil
}
