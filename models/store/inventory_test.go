package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// Two replicas on one database: each keeps its read of the inventory and
// sees a change the other made at its next read; an agent sending the
// same inventory again keeps the read (it changes nothing).
func TestInventoryKeptUntilChanged(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := storetest.MigratedURL(t, d)
			a, b := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
			node, _ := enrolled(t, a, "gpu11", 1, 4)

			first, err := a.GPUs(ctx)
			if err != nil || len(first) != 4 {
				t.Fatalf("GPUs: %d, %v; want 4", len(first), err)
			}
			again, _ := a.GPUs(ctx)
			if &again[0] != &first[0] {
				t.Error("a second read with nothing changed read the GPUs again")
			}
			if _, err := b.ApplyInventory(ctx, node, inventory(1, 4), at0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if same, _ := a.GPUs(ctx); &same[0] != &first[0] {
				t.Error("the same inventory sent again moved the stamp: every agent would make every replica read all GPUs")
			}

			// Another replica takes a GPU out of service, then adds a node.
			if err := b.SetGPUService(ctx, first[2].ID, false, "fan", models.CLIActor); err != nil {
				t.Fatal(err)
			}
			seen, _ := a.GPUs(ctx)
			if seen[2].InService || seen[2].OutOfServiceReason != "fan" {
				t.Errorf("after another replica's change GPU 2 reads %+v; want out of service for fan", seen[2])
			}
			if first[2].InService != true {
				t.Error("the earlier read changed under its holder")
			}
			gpus, _ := models.NewNodeGPUs("gpu12", 2, "NVIDIA L40S", 46068)
			if err := b.CreateNode(ctx, &models.Node{Name: "gpu12"}, gpus, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			nodes, err := a.Nodes(ctx)
			if err != nil || len(nodes) != 2 || nodes[1].Name != "gpu12" || len(nodes[1].GPUs) != 2 || len(nodes[0].GPUs) != 4 {
				t.Fatalf("after another replica added a node: %+v, %v", nodes, err)
			}
			// What a caller appends to is its own.
			grown := append(nodes[0].GPUs, models.GPU{ID: -1})
			if again, _ := a.Nodes(ctx); len(again[0].GPUs) != 4 || again[1].GPUs[0].ID == -1 || &grown[0] == &again[0].GPUs[0] {
				t.Error("an append to a node's GPUs reached the kept read")
			}
		})
	}
}

// A database emptied behind the store's back (no stamp row) still reads,
// and the next change makes the stamp again.
func TestInventoryStampMissing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		storetest.Fixture(t, db, 2)
		if err := db.Gorm.Exec("DELETE FROM inventory_stamp").Error; err != nil {
			t.Fatal(err)
		}
		gpus, err := db.GPUs(ctx)
		if err != nil || len(gpus) != 2 {
			t.Fatalf("GPUs without a stamp row: %d, %v", len(gpus), err)
		}
		if err := db.SetGPUService(ctx, gpus[0].ID, false, "fan", models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if again, _ := db.GPUs(ctx); again[0].InService {
			t.Error("a change after the stamp row was gone was not seen")
		}
	})
}
