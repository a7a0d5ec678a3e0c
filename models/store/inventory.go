package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/gpubook/gpubook/models"
)

// inventory keeps this replica's last read of every node and GPU with the
// stamp it was read under. The calendar, the status page, every booking
// form and the live status read the whole inventory; at 24,000 GPUs that
// read was a third of the portal's CPU under 50 browser users
// (scripts/fleetbench, docs/scaling.md). The stamp (inventory_stamp,
// migration 00032) moves in the same transaction as any change to nodes
// or gpus, on whichever replica or command makes it, so one indexed row
// tells whether the kept read is still the inventory.
//
// What it hands out is shared by every caller: read it, never write into
// it. Slices are capped at their length, so an append copies.
type inventory struct {
	mu      sync.Mutex
	version int64
	read    bool
	nodes   []models.Node // each node's GPUs a capped slice of gpus
	gpus    []models.GPU  // by node name, then index
}

// inventoryNow returns the inventory as of now: the kept read while the
// stamp has not moved, else a new one, which it keeps. The stamp is read
// first, so a read kept under it is at least as new as it says; a change
// committed between the two only costs one more read. Callers that
// arrive while a read runs wait for it rather than read again.
func (db *DB) inventoryNow(ctx context.Context) ([]models.Node, []models.GPU, error) {
	var version int64
	if err := db.SQL.QueryRowContext(ctx, "SELECT coalesce((SELECT version FROM inventory_stamp WHERE id = 1), 0)").Scan(&version); err != nil {
		return nil, nil, fmt.Errorf("store: inventory stamp: %w", err)
	}
	inv := db.inventory
	if inv == nil {
		return db.readInventory(ctx)
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.read && inv.version == version {
		return inv.nodes, inv.gpus, nil
	}
	nodes, gpus, err := db.readInventory(ctx)
	if err != nil {
		return nil, nil, err
	}
	inv.version, inv.read, inv.nodes, inv.gpus = version, true, nodes, gpus
	return nodes, gpus, nil
}

// readInventory reads every node and GPU from the database.
func (db *DB) readInventory(ctx context.Context) ([]models.Node, []models.GPU, error) {
	var rows []nodeRow
	if err := db.Gorm.WithContext(ctx).Order("name, id").Find(&rows).Error; err != nil {
		return nil, nil, fmt.Errorf("store: nodes: %w", err)
	}
	var grows []gpuRow
	if err := db.gpuQuery(ctx).Order("n.name, n.id, g.idx").Find(&grows).Error; err != nil {
		return nil, nil, fmt.Errorf("store: gpus: %w", err)
	}
	gpus := make([]models.GPU, len(grows))
	for i, r := range grows {
		gpus[i] = r.model()
	}
	// A node's GPUs are one run of gpus (ordered by node, then index).
	runs := map[int64][]models.GPU{}
	for lo := 0; lo < len(gpus); {
		hi := lo + 1
		for hi < len(gpus) && gpus[hi].NodeID == gpus[lo].NodeID {
			hi++
		}
		runs[gpus[lo].NodeID] = gpus[lo:hi:hi]
		lo = hi
	}
	nodes := make([]models.Node, len(rows))
	for i, r := range rows {
		nodes[i] = models.Node{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), GPUs: runs[r.ID]}
	}
	return nodes[:len(nodes):len(nodes)], gpus[:len(gpus):len(gpus)], nil
}
