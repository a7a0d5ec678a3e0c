package views

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

func TestTentativeCells(t *testing.T) {
	now := time.Date(2026, 6, 3, 10, 0, 0, 0, time.UTC)
	gpu := models.GPU{ID: 5, Index: 1, InService: true}
	node := models.Node{ID: 1, Name: "n", GPUs: []models.GPU{gpu, {ID: 6, Index: 2, InService: true}}}
	reqs := []models.PriorityRequest{
		{ID: 1, UserName: "Bob", GPUIDs: []int64{5}, StartsAt: now.Add(2 * time.Hour), EndsAt: now.Add(4 * time.Hour)},
		{ID: 2, GPUIDs: []int64{5}, StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour)}, // started: expired
		{ID: 3, GPUIDs: []int64{6}, StartsAt: now.Add(2 * time.Hour), EndsAt: now.Add(3 * time.Hour)},
	}
	g := BuildGrid(GridInput{Nodes: []models.Node{node}, Loc: time.UTC, Start: now, Days: 1, Step: time.Hour, Now: now, Tentative: reqs})
	row := g.Nodes[0].Rows[0]
	if len(row.Tentative) != 1 {
		t.Fatalf("tentative cells = %+v", row.Tentative)
	}
	c := row.Tentative[0]
	if c.Kind != CellTentative || c.Line != 12+2 || c.End != 14+2 || c.Booking.ID != 1 || c.Booking.UserName != "Bob" {
		t.Errorf("cell = %+v", c)
	}
	if len(g.Nodes[0].Rows[1].Tentative) != 1 {
		t.Error("request on the second GPU not drawn")
	}
	for _, cell := range row.Cells {
		if cell.Kind == CellOther || cell.Kind == CellMine {
			t.Errorf("a pending request holds the row: %+v", cell)
		}
	}
}
