package store

import (
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// firstInstanceIndex is the lowest index of a MIG instance on its node:
// above any GPU's (wire.MaxGPUs), so that (node_id, idx) stays unique.
const firstInstanceIndex = wire.MaxGPUs

// splitInstances separates a node's rows into whole GPUs and MIG instances.
func splitInstances(rows []gpuRow) (gpus, instances []gpuRow) {
	for _, r := range rows {
		if r.ParentID != nil {
			instances = append(instances, r)
		} else {
			gpus = append(gpus, r)
		}
	}
	return gpus, instances
}

// parentSlices is what a GPU row records as its slices: the GPU's while
// its agent lists instances, which makes it a MIG parent (not bookable
// whole); 0 otherwise, MIG off or on with nothing to book.
func parentSlices(g wire.GPU) int {
	if g.MIG && len(g.Instances) > 0 {
		return g.MIGSlices
	}
	return 0
}

// instancePlan is what an inventory does to a node's instance rows.
type instancePlan struct {
	updates []gpuRow // known instances whose values changed (back in service, too)
	inserts []gpuRow
	gone    []int64 // in service until now, no longer listed
}

// planInstances matches the instances the inventory lists (under the GPU
// rows parents names by UUID) to the node's instance rows by MIG UUID. A
// known instance keeps its row and index; a new one takes the lowest free
// index from firstInstanceIndex; one no longer listed is gone. Rows that
// would not change are left alone, so the same inventory twice writes
// nothing here.
func planInstances(mine []gpuRow, reported []wire.GPU, parents map[string]int64) instancePlan {
	var p instancePlan
	byUUID := map[string]gpuRow{}
	used := map[int]bool{}
	for _, r := range mine {
		byUUID[r.UUID] = r
		used[r.Index] = true
	}
	listed := map[string]bool{}
	next := firstInstanceIndex
	for _, g := range reported {
		parent := parents[g.UUID]
		for _, m := range g.Instances {
			listed[m.UUID] = true
			row := gpuRow{UUID: m.UUID, Model: clip(g.Model, 100), MemoryMiB: m.MemoryMiB, MIG: true, InService: true,
				ParentID: &parent, MIGProfile: m.Profile, MIGSlices: m.Slices, MIGGI: &m.GPUInstance, MIGCI: &m.ComputeInstance,
				Weight: models.MIGWeight(m.Slices, g.MIGSlices)}
			old, ok := byUUID[m.UUID]
			if !ok {
				for used[next] {
					next++
				}
				row.Index, used[next] = next, true
				p.inserts = append(p.inserts, row)
				continue
			}
			row.ID, row.Index = old.ID, old.Index
			if !old.InService && !returns(old.OutOfServiceReason) { // an admin's decision stands
				row.InService, row.OutOfServiceReason = false, old.OutOfServiceReason
			}
			if !sameInstance(old, row) {
				p.updates = append(p.updates, row)
			}
		}
	}
	for _, r := range mine {
		if !listed[r.UUID] && r.InService {
			p.gone = append(p.gone, r.ID)
		}
	}
	return p
}

// returns reports whether an instance out of service for reason comes
// back by being listed again: only when the inventory took it out.
func returns(reason string) bool {
	return reason == models.MIGGoneReason || reason == models.NotReportedReason
}

// sameInstance reports whether an instance row already holds what the
// inventory says.
func sameInstance(a, b gpuRow) bool {
	return a.Model == b.Model && a.MemoryMiB == b.MemoryMiB && a.MIG == b.MIG && a.InService == b.InService &&
		a.OutOfServiceReason == b.OutOfServiceReason && deref(a.ParentID) == deref(b.ParentID) && a.MIGProfile == b.MIGProfile &&
		a.MIGSlices == b.MIGSlices && deref(a.MIGGI) == deref(b.MIGGI) && deref(a.MIGCI) == deref(b.MIGCI) &&
		models.WeightToUnits(a.Weight) == models.WeightToUnits(b.Weight)
}

// applyInstances makes the node's instance rows match the inventory, after
// its GPU rows (gpus: as they were before): adds and updates them, then
// takes each instance no longer listed out of service and handles the
// bookings on it as an admin taking a GPU out would (moved to a free
// instance of its profile on the node, else cancelled, or ended now if it
// runs; each holder told in the app). Bookings on a GPU split since the
// last inventory, which cannot be used whole any more, go the same way.
func applyInstances(tx *gorm.DB, nodeID int64, gpus, mine []gpuRow, reported []wire.GPU, now time.Time) error {
	var parents []gpuRow
	if err := tx.Select("id, uuid").Where("node_id = ? AND parent_id IS NULL", nodeID).Find(&parents).Error; err != nil {
		return fmt.Errorf("store: inventory parents: %w", err)
	}
	ids := make(map[string]int64, len(parents))
	for _, r := range parents {
		ids[r.UUID] = r.ID
	}
	p := planInstances(mine, reported, ids)
	t := utc(now)
	for _, r := range p.updates {
		if err := tx.Model(&gpuRow{}).Where("id = ?", r.ID).Updates(map[string]any{"model": r.Model, "memory_mib": r.MemoryMiB,
			"mig": true, "in_service": r.InService, "out_of_service_reason": r.OutOfServiceReason, "parent_id": r.ParentID,
			"mig_profile": r.MIGProfile, "mig_slices": r.MIGSlices, "mig_gi": r.MIGGI, "mig_ci": r.MIGCI, "weight": r.Weight,
			"updated_at": t}).Error; err != nil {
			return fmt.Errorf("store: inventory update instance: %w", err)
		}
	}
	for _, r := range p.inserts {
		r.NodeID, r.CreatedAt, r.UpdatedAt = nodeID, t, t
		if err := tx.Omit("node_name").Create(&r).Error; err != nil {
			return fmt.Errorf("store: inventory add instance: %w", err)
		}
	}
	if len(p.gone) > 0 { // all out first, so that no booking moves onto another one leaving
		if err := tx.Model(&gpuRow{}).Where("id IN ?", p.gone).Updates(map[string]any{"in_service": false,
			"out_of_service_reason": models.MIGGoneReason, "updated_at": t}).Error; err != nil {
			return fmt.Errorf("store: inventory instance gone: %w", err)
		}
		if err := retireBookings(tx, nodeID, p.gone, models.MIGGoneReason, now); err != nil {
			return err
		}
	}
	return retireBookings(tx, nodeID, newlySplit(gpus, reported, ids), models.MIGSplitReason, now)
}

// newlySplit lists the GPUs that the inventory lists split into instances
// and that were whole before (gpus: their rows before it).
func newlySplit(gpus []gpuRow, reported []wire.GPU, ids map[string]int64) []int64 {
	was := map[string]bool{}
	for _, r := range gpus {
		was[r.UUID] = r.MIG && r.MIGSlices > 0
	}
	var out []int64
	for _, g := range reported {
		if parentSlices(g) > 0 && !was[g.UUID] {
			out = append(out, ids[g.UUID])
		}
	}
	return out
}

// retireBookings moves or ends the bookings on units that can no longer be
// used as booked: a move when PlanService offers one, else a cancellation.
func retireBookings(tx *gorm.DB, nodeID int64, gone []int64, reason string, now time.Time) error {
	if len(gone) == 0 {
		return nil
	}
	names, err := gpuNames(tx, nodeID)
	if err != nil {
		return err
	}
	for _, id := range gone {
		plan, _, err := servicePlan(tx, id, now, true)
		if err != nil {
			return err
		}
		for _, c := range plan {
			action := models.ServiceCancel
			if c.CanMove() {
				action = models.ServiceMove
			}
			if err := serviceBooking(tx, c, action, names[id], names, reason, agentActor, nil, now, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// agentActor is who the audit log names for what an inventory changed.
var agentActor = models.Actor{Label: "agent"}
