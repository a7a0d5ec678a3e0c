package views

import (
	"sort"
	"time"

	"github.com/gpubook/gpubook/models"
)

// The calendar grid is computed here, in pure Go, so that its arithmetic
// (wall-clock slots across DST changes, clipping, rounding, the now line)
// is table-tested without a browser. Columns are CSS grid lines: line 1 is
// the GPU label, slot i starts at line i+2; calendar-cols.css has a class
// per line (c2 … and e2 …) because the CSP forbids style attributes.

// MaxGridLine is the highest grid line calendar-cols.css has classes for.
const MaxGridLine = 700

// CellKind says what a grid cell shows; each kind has its own pattern,
// border and text label, never only a colour.
type CellKind string

// Cell kinds.
const (
	CellFree  CellKind = "free"  // bookable
	CellPast  CellKind = "past"  // free but over
	CellMine  CellKind = "mine"  // the viewer's booking
	CellOther CellKind = "other" // someone else's booking
	CellOut   CellKind = "out"   // GPU out of service
	// CellTentative is a pending priority request: it holds nothing and is
	// drawn over the row (priority_calendar.go).
	CellTentative CellKind = "tentative"
	// CellSplit is a GPU split into MIG instances: not bookable whole, its
	// instances' rows below it are.
	CellSplit CellKind = "split"
)

// GridInput is what the grid is built from: one Store.Nodes and one
// Store.Bookings answer, so the queries per render never depend on the
// number of bookings.
type GridInput struct {
	Nodes    []models.Node
	Bookings []models.Booking
	ViewerID int64
	Loc      *time.Location
	Start    time.Time // any instant of the first day; the grid starts at its local midnight
	Days     int
	Step     time.Duration // column width in time
	Now      time.Time
	NodeID   int64  // only this node (0 = all)
	Model    string // only GPUs of this model ("" = all)
	// FreeSplit splits free runs at these wall-clock hours (and at days), so
	// that a "book" link without JavaScript lands near the chosen time.
	FreeSplit int
	// TickHours is the distance of the hour labels in the header.
	TickHours int
	// Tentative are the pending priority requests of the range.
	Tentative []models.PriorityRequest
	// Overview leaves free runs out (the row's background is free): a week
	// of links per GPU made the page megabytes on a busy cluster, and the
	// drag or the day view books instead.
	Overview bool
	// FreeOnly keeps only the GPUs that are free at the view's reference
	// instant (now, or the range's start for a future range).
	FreeOnly bool
	// Collapse shows nodes as a one-line summary unless Open names them:
	// hundreds of GPU rows are no overview.
	Collapse bool
	Open     map[int64]bool
}

// Grid is the calendar's view model.
type Grid struct {
	From, To time.Time
	Slots    []time.Time // start of each column, then To
	Cols     int
	Days     []GridDay
	Ticks    []GridTick
	NowLine  int // grid line of the column that contains now; 0 = not shown
	NowTenth int // how much of that column has passed, in tenths
	Nodes    []GridNode
	Overview bool          // no free cells: rows carry an end marker instead
	split    map[int64]int // the node's GPUs split into MIG instances, while laying out
}

// GridDay is one day's header cell.
type GridDay struct {
	Date        time.Time // local midnight
	Line, End   int
	Today       bool
	Hours       int // 23, 24 or 25: a DST change shows here
	Weekend     bool
	FirstColumn int
}

// GridTick is one hour label in the header.
type GridTick struct {
	Label     string
	Line, End int
}

// GridNode is a node's header and its GPU rows.
type GridNode struct {
	ID        int64
	Name      string
	Model     string // the models of its GPUs, "A100 · H100" when mixed
	MemoryMiB int64  // per GPU (the first GPU's)
	Rows      []GridRow
	Collapsed bool // only the summary: GPUs and how many are free
	GPUs      int  // GPUs that pass the filters
	Free      int  // of those, free at the reference instant
}

// GridRow is one GPU, or one MIG instance, across the range.
type GridRow struct {
	GPU       models.GPU
	Cells     []GridCell
	Tentative []GridCell // pending requests, over the cells
	// Label names the row on its node: "GPU 3", or "GPU 3 · 1g.10gb" for a
	// MIG instance, whose Share of its GPU is "1/7".
	Label string
	Share string
	// Instances is, on a GPU split into MIG instances, how many it has: the
	// row is then not bookable whole, and its instances' rows follow it.
	Instances int
}

// GridCell is one block of a row: a booking, a free run or a past run.
type GridCell struct {
	Kind        CellKind
	Line, End   int
	Start, Stop time.Time // what the cell covers, clipped to the range (free: bookable part)
	Booking     *models.Booking
	Active      bool // the booking runs now
	CutBefore   bool // the booking started before the range
	CutAfter    bool // the booking goes on after the range
}

// BuildGrid lays out the calendar.
func BuildGrid(in GridInput) Grid {
	g := Grid{}
	for in.Step > 0 && time.Duration(in.Days)*25*time.Hour/in.Step > MaxGridLine-2 {
		in.Step *= 2 // the stylesheet has classes for MaxGridLine lines
	}
	g.Slots, g.Days = wallClockSlots(in.Start, in.Days, in.Step, in.Loc)
	g.Cols = len(g.Slots) - 1
	g.From, g.To = g.Slots[0], g.Slots[g.Cols]
	today := in.Now.In(in.Loc)
	for i := range g.Days {
		d := g.Days[i].Date
		g.Days[i].Today = d.Year() == today.Year() && d.YearDay() == today.YearDay()
	}
	g.Ticks = ticks(g.Slots, in.Loc, in.TickHours, g.Days)
	if in.Overview { // hours only ("06"): a week's labels fit at 1280 px
		for i := range g.Ticks {
			g.Ticks[i].Label = g.Ticks[i].Label[:2]
		}
	}
	if !in.Now.Before(g.From) && in.Now.Before(g.To) {
		i := g.floor(in.Now)
		g.NowLine = i + 2
		g.NowTenth = int(in.Now.Sub(g.Slots[i]) * 10 / g.Slots[i+1].Sub(g.Slots[i]))
	}
	byGPU := map[int64][]*models.Booking{}
	for i := range in.Bookings {
		b := &in.Bookings[i]
		for _, id := range b.GPUIDs {
			byGPU[id] = append(byGPU[id], b)
		}
	}
	for _, bs := range byGPU {
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].StartsAt.Before(bs[j].StartsAt) })
	}
	g.Overview = in.Overview
	g.Nodes = g.nodes(in, byGPU)
	return g
}

// nodes lays out the nodes and GPUs that pass the filters; a collapsed
// node keeps only its counts. A MIG instance is a row of its own under its
// GPU and counts as a unit; a split GPU is a row that books nothing and
// counts as none.
func (g *Grid) nodes(in GridInput, byGPU map[int64][]*models.Booking) []GridNode {
	split := boundaries(g.Slots, in.Loc, in.FreeSplit, g.Days)
	ref := later(in.Now, g.From)
	var out []GridNode
	for _, n := range in.Nodes {
		if in.NodeID != 0 && n.ID != in.NodeID {
			continue
		}
		gn := GridNode{ID: n.ID, Name: n.Name, Model: nodeModels(n.GPUs), Collapsed: in.Collapse && !in.Open[n.ID]}
		g.split = migInstances(n.GPUs)
		byID := gpusByID(n.GPUs)
		var parent *GridRow // a split GPU's row, shown with its first instance that passes
		for _, gpu := range unitOrder(n.GPUs) {
			if in.Model != "" && gpu.Model != in.Model {
				continue
			}
			row := GridRow{GPU: gpu, Label: UnitName(gpu, byID), Share: SliceShare(gpu, byID), Instances: g.split[gpu.ID]}
			if row.Instances > 0 {
				parent = nil
				if !gn.Collapsed {
					row.Cells, row.Tentative = g.rowCells(gpu, byGPU[gpu.ID], in, split), g.tentativeCells(gpu, in)
					parent = &row
				}
				continue
			}
			free := ref.Before(g.To) && FreeAt(gpu, byGPU[gpu.ID], ref)
			if in.FreeOnly && !free {
				continue
			}
			gn.GPUs++
			if free {
				gn.Free++
			}
			if gn.MemoryMiB == 0 && !gpu.IsMIGInstance() {
				gn.MemoryMiB = gpu.MemoryMiB
			}
			if gn.Collapsed {
				continue
			}
			if parent != nil && gpu.ParentID == parent.GPU.ID {
				gn.Rows = append(gn.Rows, *parent)
				parent = nil
			}
			row.Cells, row.Tentative = g.rowCells(gpu, byGPU[gpu.ID], in, split), g.tentativeCells(gpu, in)
			gn.Rows = append(gn.Rows, row)
		}
		if gn.MemoryMiB == 0 && len(n.GPUs) > 0 {
			gn.MemoryMiB = n.GPUs[0].MemoryMiB
		}
		if gn.GPUs > 0 {
			out = append(out, gn)
		}
	}
	g.split = nil
	return out
}

// FreeAt says whether a GPU can be booked at t: in service and no blocking
// booking covers t. The "free only" filter and the collapsed node's count
// use it.
func FreeAt(gpu models.GPU, bookings []*models.Booking, t time.Time) bool {
	if !gpu.InService {
		return false
	}
	for _, b := range bookings {
		if b.Blocking() && !t.Before(b.StartsAt) && t.Before(b.EndsAt) {
			return false
		}
	}
	return true
}

// wallClockSlots steps through each local day from its midnight, so that a
// day with a DST change has 23 or 25 hours of columns and every day starts
// at its own midnight.
func wallClockSlots(start time.Time, days int, step time.Duration, loc *time.Location) ([]time.Time, []GridDay) {
	if days < 1 {
		days = 1
	}
	if step <= 0 {
		step = 30 * time.Minute
	}
	local := start.In(loc)
	var slots []time.Time
	var out []GridDay
	for d := 0; d < days; d++ {
		day := time.Date(local.Year(), local.Month(), local.Day()+d, 0, 0, 0, 0, loc)
		next := time.Date(local.Year(), local.Month(), local.Day()+d+1, 0, 0, 0, 0, loc)
		first := len(slots)
		for t := day; t.Before(next); t = t.Add(step) {
			slots = append(slots, t)
		}
		wd := day.Weekday()
		out = append(out, GridDay{Date: day, Line: first + 2, End: len(slots) + 2, FirstColumn: first,
			Hours: int(next.Sub(day).Round(time.Hour) / time.Hour), Weekend: wd == time.Saturday || wd == time.Sunday})
		if d == days-1 {
			slots = append(slots, next)
		}
	}
	return slots, out
}

// ticks labels the header every tickHours of wall-clock time, and at each day's start.
func ticks(slots []time.Time, loc *time.Location, tickHours int, days []GridDay) []GridTick {
	if tickHours <= 0 {
		tickHours = 1
	}
	starts := boundaries(slots, loc, tickHours, days)
	var out []GridTick
	for i := 0; i < len(slots)-1; i++ {
		if !starts[i] {
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].End = i + 2
		}
		out = append(out, GridTick{Label: slots[i].In(loc).Format("15:04"), Line: i + 2})
	}
	if len(out) > 0 {
		out[len(out)-1].End = len(slots) + 1
	}
	return out
}

// boundaries marks the columns that start a day or a whole multiple of hours.
func boundaries(slots []time.Time, loc *time.Location, hours int, days []GridDay) []bool {
	b := make([]bool, len(slots))
	for i := 0; i < len(slots)-1; i++ {
		t := slots[i].In(loc)
		b[i] = hours > 0 && t.Minute() == 0 && t.Hour()%hours == 0
	}
	for _, d := range days {
		b[d.FirstColumn] = true
	}
	return b
}

// floor is the column that contains t (clamped to the grid).
func (g *Grid) floor(t time.Time) int {
	i := sort.Search(len(g.Slots), func(i int) bool { return g.Slots[i].After(t) }) - 1
	return max(0, min(i, g.Cols-1))
}

// ceil is the first column boundary at or after t (clamped to the grid).
func (g *Grid) ceil(t time.Time) int {
	i := sort.Search(len(g.Slots), func(i int) bool { return !g.Slots[i].Before(t) })
	return max(0, min(i, g.Cols))
}
