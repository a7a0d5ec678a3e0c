package main

import (
	"context"
	"fmt"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// The demo's A100 node has one GPU split into MIG instances, as a lab that
// shares one card among notebooks and small jobs does: seeded through the
// inventory path an agent takes, with the UUIDs the simulated agent of
// `gpubook demo --agents` reports for the same layout (sim_mig), so that
// its first inventory keeps the instances, their bookings and their use.

// demoMIG is a node's split GPU: its index and its instances' profiles.
type demoMIG struct {
	GPU      int
	Profiles []string
}

// simMIG is the layout in the agent's sim_mig form: "7:1g.10gb,1g.10gb,…".
func (m demoMIG) simMIG() string {
	s := fmt.Sprintf("%d:", m.GPU)
	for i, p := range m.Profiles {
		if i > 0 {
			s += ","
		}
		s += p
	}
	return s
}

// demoMIGSlices is a profile's compute slices and memory: "1g.10gb" is one
// slice of 10 GiB (the simulation's reading of the name).
func demoMIGSlices(profile string) (int, int64) {
	var slices, gb int
	if _, err := fmt.Sscanf(profile, "%dg.%dgb", &slices, &gb); err != nil {
		return 1, 1024
	}
	return slices, int64(gb) * 1024
}

// demoInventory is the inventory the node's simulated agent sends.
func demoInventory(dn demoNode, now time.Time) wire.Inventory {
	inv := wire.Inventory{Node: dn.Name, AgentVersion: "demo", ReportedAt: now}
	for i := 0; i < dn.GPUs; i++ {
		g := wire.GPU{UUID: wire.SimulatedGPUUUID(dn.Name, i), Index: i, Minor: i, Model: dn.Model, MemoryMiB: dn.MemoryMiB}
		if dn.MIG != nil && dn.MIG.GPU == i {
			g.MIG, g.MIGSlices = true, 7
			for j, p := range dn.MIG.Profiles {
				slices, mem := demoMIGSlices(p)
				g.Instances = append(g.Instances, wire.MIGInstance{UUID: wire.SimulatedMIGUUID(dn.Name, i, j+1), Profile: p,
					GPUInstance: j + 1, ComputeInstance: 0, Slices: slices, MemoryMiB: mem})
			}
		}
		inv.GPUs = append(inv.GPUs, g)
	}
	return inv
}

// seedMIG splits the node's MIG GPU through the inventory and learns the
// instances' IDs (gpuKey(node, 64+j), the indices the store gives them).
func (s *seeder) seedMIG(ctx context.Context, id int64, dn demoNode) error {
	if dn.MIG == nil {
		return nil
	}
	if _, err := s.db.ApplyInventory(ctx, id, demoInventory(dn, s.now), s.now); err != nil {
		return fmt.Errorf("node %s MIG layout: %w", dn.Name, err)
	}
	node, err := s.db.Node(ctx, id)
	if err != nil {
		return err
	}
	for _, g := range node.GPUs {
		s.gpus[gpuKey(dn.Name, g.Index)] = g.ID
	}
	s.added.gpus += len(dn.MIG.Profiles)
	return nil
}
