package views

import (
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
)

// rowCells lays one GPU's bookings (sorted by start) over the columns and
// fills the gaps with past, free or out-of-service runs. Bookings rarely
// align with columns (a release at 14:07): a block covers every column it
// touches, but never reaches back over the block before it.
func (g *Grid) rowCells(gpu models.GPU, bookings []*models.Booking, in GridInput, split []bool) []GridCell {
	var cells []GridCell
	cursor := 0
	if in.Overview && gpu.InService && g.split[gpu.ID] == 0 {
		// One past strip under the whole row: the blocks lie over it.
		if p := g.pastEnd(in.Now); p > 0 {
			cells = append(cells, GridCell{Kind: CellPast, Line: 2, End: p + 2, Start: g.Slots[0], Stop: g.Slots[p]})
		}
	}
	for _, b := range bookings {
		if !b.Blocking() || !b.StartsAt.Before(g.To) || !b.EndsAt.After(g.From) {
			continue
		}
		s, e := g.floor(b.StartsAt), g.ceil(b.EndsAt)
		s = max(s, cursor)
		if s >= g.Cols {
			s = g.Cols - 1
		}
		if e <= s {
			e = s + 1
		}
		cells = append(cells, g.gap(gpu, cursor, s, in, split)...)
		kind := CellOther
		if b.UserID == in.ViewerID {
			kind = CellMine
		}
		cells = append(cells, GridCell{Kind: kind, Line: s + 2, End: e + 2, Booking: b,
			Start: later(b.StartsAt, g.From), Stop: earlier(b.EndsAt, g.To),
			Active:    !in.Now.Before(b.StartsAt) && in.Now.Before(b.EndsAt),
			CutBefore: b.StartsAt.Before(g.From), CutAfter: b.EndsAt.After(g.To)})
		cursor = max(cursor, e)
	}
	return append(cells, g.gap(gpu, cursor, g.Cols, in, split)...)
}

// gap fills columns [a, b) that no booking covers.
func (g *Grid) gap(gpu models.GPU, a, b int, in GridInput, split []bool) []GridCell {
	if a >= b {
		return nil
	}
	if !gpu.InService {
		return []GridCell{{Kind: CellOut, Line: a + 2, End: b + 2, Start: g.Slots[a], Stop: g.Slots[b]}}
	}
	if g.split[gpu.ID] > 0 { // its instances' rows are bookable, not the GPU whole
		return []GridCell{{Kind: CellSplit, Line: a + 2, End: b + 2, Start: g.Slots[a], Stop: g.Slots[b]}}
	}
	var cells []GridCell
	past := g.pastEnd(in.Now)
	if in.Overview { // the row's past strip and background draw the gap
		return nil
	}
	if a < past {
		p := min(b, past)
		cells = append(cells, GridCell{Kind: CellPast, Line: a + 2, End: p + 2, Start: g.Slots[a], Stop: g.Slots[p]})
		a = p
	}
	for a < b && !in.Overview {
		e := a + 1
		for e < b && !split[e] {
			e++
		}
		start := g.Slots[a]
		if start.Before(in.Now) {
			start = in.Now.Truncate(time.Minute)
		}
		cells = append(cells, GridCell{Kind: CellFree, Line: a + 2, End: e + 2, Start: start, Stop: g.Slots[e]})
		a = e
	}
	return cells
}

// pastEnd is the first column that is not over: the one that contains now.
func (g *Grid) pastEnd(now time.Time) int {
	switch {
	case now.Before(g.From):
		return 0
	case !now.Before(g.To):
		return g.Cols
	}
	return g.floor(now)
}

// nodeModels names a node's GPU models in order of appearance.
func nodeModels(gpus []models.GPU) string {
	var names []string
	seen := map[string]bool{}
	for _, g := range gpus {
		if !seen[g.Model] {
			seen[g.Model] = true
			names = append(names, g.Model)
		}
	}
	return strings.Join(names, " · ")
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
