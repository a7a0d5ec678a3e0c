package main

import (
	"slices"
	"testing"

	"github.com/gpubook/gpubook/models"
)

// TestNodeRowNamesSlices: `gpubook node list` names a retired MIG slice
// by its GPU and profile, as the pages do, not by its own index.
func TestNodeRowNamesSlices(t *testing.T) {
	n := models.Node{Name: "a", GPUs: []models.GPU{
		{ID: 1, Index: 7, Model: "A100", MemoryMiB: 81920, InService: true, MIG: true, MIGSlices: 7},
		{ID: 2, Index: 64, ParentID: 1, MIGProfile: "1g.10gb", Model: "A100", MemoryMiB: 9856, OutOfServiceReason: models.MIGGoneReason},
	}}
	if got, want := nodeRow(n)[4], "1/1 (GPU 7 · 1g.10gb out: "+models.MIGGoneReason+")"; got != want {
		t.Errorf("in service = %q, want %q", got, want)
	}
}

// TestNodeRowCountsWholeGPUs: GPUS and IN SERVICE count whole GPUs, a
// split GPU once, its current slices told beside it; a retired slice is
// no slice of the layout, and MEMORY lists the GPUs' memory only.
func TestNodeRowCountsWholeGPUs(t *testing.T) {
	gpus := []models.GPU{
		{ID: 1, Index: 0, Model: "A100", MemoryMiB: 81920, InService: true, MIG: true, MIGSlices: 7},
		{ID: 2, Index: 1, Model: "A100", MemoryMiB: 81920, OutOfServiceReason: "fan"},
	}
	for i := range 7 {
		gpus = append(gpus, models.GPU{ID: int64(10 + i), Index: 64 + i, ParentID: 1, MIGProfile: "1g.10gb", Model: "A100", MemoryMiB: 9856, InService: true})
	}
	gpus = append(gpus, models.GPU{ID: 30, Index: 71, ParentID: 1, MIGProfile: "3g.40gb", Model: "A100", MemoryMiB: 40192, OutOfServiceReason: models.MIGGoneReason})
	row := nodeRow(models.Node{Name: "a", GPUs: gpus})
	want := []string{"a", "2 (1 split into 7 slices)", "A100", "81920 MiB", "1/2 (GPU 1 out: fan; GPU 0 · 3g.40gb out: " + models.MIGGoneReason + ")"}
	if !slices.Equal(row, want) {
		t.Errorf("row = %q\nwant %q", row, want)
	}
	row = nodeRow(models.Node{Name: "b", GPUs: gpus[1:2]})
	if want := []string{"b", "1", "A100", "81920 MiB", "0/1 (GPU 1 out: fan)"}; !slices.Equal(row, want) {
		t.Errorf("row without MIG = %q, want %q", row, want)
	}
}
