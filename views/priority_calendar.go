package views

import (
	"slices"

	"github.com/gpubook/gpubook/models"
)

// tentativeCells places the pending priority requests on a GPU's row. They
// hold nothing, so they are drawn over the row's cells rather than among
// them, and the free cells beneath stay bookable. A request whose start
// has passed has expired and is not drawn.
func (g *Grid) tentativeCells(gpu models.GPU, in GridInput) []GridCell {
	var out []GridCell
	for i := range in.Tentative {
		r := &in.Tentative[i]
		if !r.StartsAt.After(in.Now) || !slices.Contains(r.GPUIDs, gpu.ID) || !r.StartsAt.Before(g.To) || !r.EndsAt.After(g.From) {
			continue
		}
		s, e := g.floor(r.StartsAt), g.ceil(r.EndsAt)
		if e <= s {
			e = s + 1
		}
		b := &models.Booking{ID: r.ID, UserID: r.UserID, UserName: r.UserName, GPUIDs: r.GPUIDs, StartsAt: r.StartsAt, EndsAt: r.EndsAt, Note: r.Purpose}
		out = append(out, GridCell{Kind: CellTentative, Line: s + 2, End: e + 2, Booking: b,
			Start: later(r.StartsAt, g.From), Stop: earlier(r.EndsAt, g.To)})
	}
	return out
}

// tentativeClass is the overlay's class: its own pattern and its columns.
func tentativeClass(c GridCell) string { return "t " + span(c.Line, c.End) }
