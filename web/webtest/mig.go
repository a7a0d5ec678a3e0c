package webtest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// SplitMIG reports for node what its agent would once each GPU that
// layouts names by index is in MIG mode (7 slices) with instances of the
// profiles listed ("1g.10gb", "3g.40gb"): the node's other GPUs whole,
// its placeholder UUIDs replaced by real ones. The store keeps each
// instance as a unit under its GPU. It returns the instances' MIG UUIDs,
// by GPU index then position.
func (e *Env) SplitMIG(node string, layouts map[int][]string) []string {
	e.T.Helper()
	ctx := context.Background()
	nodes, err := e.DB.Nodes(ctx)
	if err != nil {
		e.T.Fatalf("nodes: %v", err)
	}
	for _, n := range nodes {
		if n.Name != node {
			continue
		}
		inv := wire.Inventory{Node: node, AgentVersion: "test", ReportedAt: time.Now().UTC()}
		var uuids []string
		for _, g := range n.GPUs {
			if g.IsMIGInstance() {
				continue
			}
			w := wire.GPU{UUID: fmt.Sprintf("GPU-%08d-0000-4000-8000-%012d", n.ID, g.Index), Index: g.Index, Minor: g.Index,
				Model: g.Model, MemoryMiB: g.MemoryMiB}
			if profiles, ok := layouts[g.Index]; ok {
				w.MIG, w.MIGSlices = true, 7
				for i, p := range profiles {
					slices, _ := strconv.Atoi(p[:strings.IndexByte(p, 'g')])
					gb, _ := strconv.Atoi(strings.TrimSuffix(p[strings.IndexByte(p, '.')+1:], "gb"))
					m := wire.MIGInstance{UUID: fmt.Sprintf("MIG-%08d-%04d-4000-8000-%012d", n.ID, g.Index, i), Profile: p,
						GPUInstance: 7 + i, Slices: slices, MemoryMiB: min(int64(gb)*1024, g.MemoryMiB)}
					w.Instances = append(w.Instances, m)
					uuids = append(uuids, m.UUID)
				}
			}
			inv.GPUs = append(inv.GPUs, w)
		}
		if _, err := e.DB.ApplyInventory(ctx, n.ID, inv, time.Now()); err != nil {
			e.T.Fatalf("inventory of %s: %v", node, err)
		}
		return uuids
	}
	e.T.Fatalf("no node %s", node)
	return nil
}
