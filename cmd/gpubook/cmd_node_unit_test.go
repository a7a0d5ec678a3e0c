package main

import (
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
	if got, want := nodeRow(n)[4], "1/2 (GPU 7 · 1g.10gb out: "+models.MIGGoneReason+")"; got != want {
		t.Errorf("in service = %q, want %q", got, want)
	}
}
