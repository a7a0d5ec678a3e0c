package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpubook/gpubook/models"
)

// node runs "gpubook node add|list". Registering by hand lets people book
// before the node's agent is installed; the agent later reports the real GPUs.
func (c *cli) node(ctx context.Context, args []string) error {
	return c.group(ctx, "node", args, []subcommand{
		{"add", c.nodeAdd},
		{"list", c.nodeList},
	})
}

func (c *cli) nodeAdd(ctx context.Context, args []string) error {
	f := newFlags("node add", `gpubook node add --name HOST --gpus N --model "NVIDIA A100-SXM4-80GB" --memory-mib 81920`,
		"Registers a GPU node and its GPUs by hand, with placeholder UUIDs until its agent reports.", false)
	name := f.String("name", "", "the node's host `name` (required)")
	count := f.Int("gpus", 0, "`number` of GPUs, 1-64 (required)")
	model := f.String("model", "", "GPU `model` as nvidia-smi shows it (required)")
	mem := f.Int64("memory-mib", 0, "memory per GPU in `MiB` (required)")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	// Check everything before opening the database, so that bad input writes nothing.
	n := &models.Node{Name: *name}
	fe := models.FieldErrors{}
	if err := n.Validate(); err != nil {
		for k, m := range models.AsError(err).Fields {
			fe.Add(k, m)
		}
	}
	gpus, err := models.NewNodeGPUs(n.Name, *count, *model, *mem)
	if err != nil {
		for k, m := range models.AsError(err).Fields {
			fe.Add(k, m)
		}
	}
	if err := fe.Err(); err != nil {
		return c.explain("node add", err)
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: node add: %w", err)
	}
	defer db.Close()
	if err := db.CreateNode(ctx, n, gpus, models.CLIActor); err != nil {
		return c.explain("node add", err)
	}
	fmt.Fprintf(c.stdout, "added node %d: %s with %d× %s (%d MiB)\n", n.ID, n.Name, len(gpus), gpus[0].Model, gpus[0].MemoryMiB)
	return nil
}

func (c *cli) nodeList(ctx context.Context, args []string) error {
	f := newFlags("node list", "gpubook node list", "Lists nodes with their GPUs.", false)
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: node list: %w", err)
	}
	defer db.Close()
	nodes, err := db.Nodes(ctx)
	if err != nil {
		return fmt.Errorf("cli: node list: %w", err)
	}
	rows := make([][]string, len(nodes))
	for i, n := range nodes {
		rows[i] = nodeRow(n)
	}
	return table(c.stdout, []string{"NODE", "GPUS", "MODEL", "MEMORY", "IN SERVICE"}, rows)
}

// nodeRow summarises a node on one line. GPUS and IN SERVICE count whole
// GPUs only: a GPU split into MIG instances counts once, its slices are
// told beside it ("8 (1 split into 7 slices)"). Mixed models and memory
// sizes of the GPUs are all listed, and units out of service, slices
// included, are named with their reason.
func nodeRow(n models.Node) []string {
	var modelList, memList []string
	seenModel, seenMem := map[string]bool{}, map[int64]bool{}
	whole, inService, split, parts := 0, 0, 0, 0
	splitIDs := map[int64]bool{}
	for _, g := range n.GPUs {
		if g.IsMIGParent() {
			splitIDs[g.ID] = true
		}
	}
	var out []string
	names := models.UnitNames(n.GPUs) // a MIG slice is "GPU 7 · 1g.10gb", as on the pages
	for _, g := range n.GPUs {
		if !g.InService {
			out = append(out, names[g.ID]+" out: "+dash(g.OutOfServiceReason))
		}
		if g.IsMIGInstance() {
			// A slice of the GPU's current layout; one its agent no
			// longer lists only keeps its history.
			if splitIDs[g.ParentID] && g.OutOfServiceReason != models.MIGGoneReason {
				parts++
			}
			continue
		}
		whole++
		if g.InService {
			inService++
		}
		if splitIDs[g.ID] {
			split++
		}
		if !seenModel[g.Model] {
			seenModel[g.Model] = true
			modelList = append(modelList, g.Model)
		}
		if !seenMem[g.MemoryMiB] {
			seenMem[g.MemoryMiB] = true
			memList = append(memList, strconv.FormatInt(g.MemoryMiB, 10)+" MiB")
		}
	}
	sort.Strings(modelList)
	gpus := strconv.Itoa(whole)
	if split > 0 {
		word := "slices"
		if parts == 1 {
			word = "slice"
		}
		gpus += fmt.Sprintf(" (%d split into %d %s)", split, parts, word)
	}
	service := fmt.Sprintf("%d/%d", inService, whole)
	if len(out) > 0 {
		service += " (" + strings.Join(out, "; ") + ")"
	}
	return []string{n.Name, gpus, dash(strings.Join(modelList, ", ")), dash(strings.Join(memList, ", ")), service}
}
