package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/wire"
)

// The fixtures that the store's tests and the telemetry half's
// (models/store/telemetry) share.

// Fixture makes the user Ada and the node gpu01 with n GPUs.
func Fixture(t testing.TB, db *store.DB, n int) (*models.User, *models.Node) {
	t.Helper()
	ctx := context.Background()
	u := &models.User{Email: "Ada@Example.org", Name: "Ada"}
	if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
		t.Fatalf("create user: %v", err)
	}
	gpus, err := models.NewNodeGPUs("gpu01", n, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		t.Fatal(err)
	}
	node := &models.Node{Name: "gpu01"}
	if err := db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		t.Fatalf("create node: %v", err)
	}
	return u, node
}

// AgentAt0 is when the fixtures' nodes enrol and report their inventory.
var AgentAt0 = time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)

// RealUUID is the UUID of GPU i of fixture node node, as its agent reports it.
func RealUUID(node, i int) string { return fmt.Sprintf("GPU-%08d-0000-4000-8000-%012d", node, i) }

// Enrolled makes a node with n placeholder GPUs, enrols it and reports an
// inventory of n real GPUs. It returns the node ID and the credential.
func Enrolled(t *testing.T, db *store.DB, name string, nodeNo, n int) (int64, string) {
	t.Helper()
	ctx := context.Background()
	gpus, err := models.NewNodeGPUs(name, n, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		t.Fatal(err)
	}
	node := &models.Node{Name: name}
	if err := db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	tok, _, err := db.CreateEnrollToken(ctx, node.ID, AgentAt0, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := db.Enroll(ctx, wire.EnrollRequest{Token: tok, Hostname: name, AgentVersion: "test"}, AgentAt0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplyInventory(ctx, node.ID, Inventory(nodeNo, n), AgentAt0); err != nil {
		t.Fatal(err)
	}
	return node.ID, resp.Credential
}

// Inventory is fixture node nodeNo's report of n A100s.
func Inventory(nodeNo, n int) wire.Inventory {
	inv := wire.Inventory{Node: "x", AgentVersion: "test", ReportedAt: AgentAt0}
	for i := range n {
		inv.GPUs = append(inv.GPUs, wire.GPU{UUID: RealUUID(nodeNo, i), Index: i, Minor: i, Model: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920})
	}
	return inv
}

// UsageBatch is fixture node nodeNo's usage of gpus GPUs for minutes
// minutes from from; GPU 0 names the users ada (busy) and ghost.
func UsageBatch(nodeNo int, from time.Time, minutes, gpus int) wire.UsageBatch {
	b := wire.UsageBatch{Node: "x", BatchID: "b"}
	for m := range minutes {
		for g := range gpus {
			avg, peak := float64(10*g), float64(10*g+5)
			r := wire.UsageRecord{GPUUUID: RealUUID(nodeNo, g), Minute: from.Add(time.Duration(m) * time.Minute),
				UtilAvgPct: &avg, UtilMaxPct: &peak, MemUsedMiB: 1000, MemTotalMiB: 81920, Samples: 6}
			if g == 0 {
				r.Users = []wire.UserUsage{{User: "ada", UID: 1001, MemoryMiB: 1000, Processes: 1, Busy: true}, {User: "ghost", UID: 1002}}
			}
			b.Records = append(b.Records, r)
		}
	}
	return b
}

// Count is the number of rows of table.
func Count(t *testing.T, db *store.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.Gorm.Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}
