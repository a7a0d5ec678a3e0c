package views

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

func TestInitials(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"Bob Builder", "BB"},
		{"alice", "A"},
		{"Jean Paul Sartre", "JP"},
		{"陈伟", "陈"},
		{"", ""},
	} {
		if got := Initials(tt.name); got != tt.want {
			t.Errorf("Initials(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestBlockLabelDegradesToInitials(t *testing.T) {
	g := Grid{Cols: 168} // a week of hour columns: about one character per column
	b := &models.Booking{UserName: "Bob Builder", Note: "sweep"}
	mineB := &models.Booking{UserName: "Alice Admin", Note: "llama finetune"}
	tests := []struct {
		name string
		b    *models.Booking
		mine bool
		cols int
		want string
	}{
		{"wide: full text", b, false, 24, "Bob Builder · sweep"},
		{"narrow: initials", b, false, 4, "BB"},
		{"two columns: one initial", b, false, 2, "B"},
		{"one column: nothing, the title keeps the text", b, false, 1, ""},
		{"mine wide", mineB, true, 24, "★ llama finetune"},
		{"mine narrow: the star", mineB, true, 3, "★"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := GridCell{Line: 10, End: 10 + tt.cols, Booking: tt.b}
			if got := g.blockLabel(c, tt.mine); got != tt.want {
				t.Errorf("label = %q, want %q", got, tt.want)
			}
			if got, want := blockText(c, tt.mine), map[bool]string{false: "Bob Builder · sweep", true: "★ llama finetune"}[tt.mine]; got != want {
				t.Errorf("full text = %q, want %q", got, want)
			}
		})
	}
}

func TestBuildGridOverview(t *testing.T) {
	in := gridFixture()
	in.Overview = true
	day := in.Start
	in.Bookings = []models.Booking{
		{ID: 100, UserID: 8, GPUIDs: []int64{1}, StartsAt: day.Add(14 * time.Hour), EndsAt: day.Add(15 * time.Hour), Status: models.StatusConfirmed},
	}
	g := BuildGrid(in)
	type cell struct {
		kind      CellKind
		line, end int
	}
	want := []cell{{CellPast, 2, 22}, {CellOther, 30, 32}} // one past strip, the block, no free cells
	cells := g.Nodes[0].Rows[0].Cells
	if len(cells) != len(want) {
		t.Fatalf("cells = %+v, want %+v", cells, want)
	}
	for i, c := range cells {
		if got := (cell{c.Kind, c.Line, c.End}); got != want[i] {
			t.Errorf("cell %d = %+v, want %+v", i, got, want[i])
		}
	}
	if out := g.Nodes[0].Rows[2].Cells; len(out) != 1 || out[0].Kind != CellOut {
		t.Errorf("out-of-service row = %+v, want one out run", out)
	}
	if !g.Overview || g.endMarker() != "z c49 e50" {
		t.Errorf("overview %v, end marker %q", g.Overview, g.endMarker())
	}
}

func TestBuildGridFreeOnlyAndCollapse(t *testing.T) {
	day := gridFixture().Start
	busyNow := models.Booking{ID: 1, UserID: 8, GPUIDs: []int64{1}, StartsAt: day.Add(10 * time.Hour), EndsAt: day.Add(11 * time.Hour), Status: models.StatusConfirmed}
	cancelled := models.Booking{ID: 2, UserID: 8, GPUIDs: []int64{2}, StartsAt: day.Add(10 * time.Hour), EndsAt: day.Add(11 * time.Hour), Status: models.StatusCancelled}
	tests := []struct {
		name      string
		freeOnly  bool
		collapse  bool
		open      map[int64]bool
		wantRows  []int // rows per node shown
		wantFree  []int
		wantGPUs  []int
		collapsed []bool
	}{
		{"all", false, false, nil, []int{3, 1}, []int{1, 1}, []int{3, 1}, []bool{false, false}},
		{"free only drops the busy and the out-of-service GPU", true, false, nil, []int{1, 1}, []int{1, 1}, []int{1, 1}, []bool{false, false}},
		{"collapsed: summaries only", false, true, nil, []int{0, 0}, []int{1, 1}, []int{3, 1}, []bool{true, true}},
		{"collapsed with one node open", false, true, map[int64]bool{11: true}, []int{0, 1}, []int{1, 1}, []int{3, 1}, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := gridFixture()
			in.Bookings = []models.Booking{busyNow, cancelled}
			in.FreeOnly, in.Collapse, in.Open = tt.freeOnly, tt.collapse, tt.open
			g := BuildGrid(in)
			if len(g.Nodes) != len(tt.wantRows) {
				t.Fatalf("nodes = %d, want %d", len(g.Nodes), len(tt.wantRows))
			}
			for i, n := range g.Nodes {
				if len(n.Rows) != tt.wantRows[i] || n.Free != tt.wantFree[i] || n.GPUs != tt.wantGPUs[i] || n.Collapsed != tt.collapsed[i] {
					t.Errorf("node %s: rows %d free %d GPUs %d collapsed %v, want %d %d %d %v", n.Name, len(n.Rows), n.Free, n.GPUs, n.Collapsed,
						tt.wantRows[i], tt.wantFree[i], tt.wantGPUs[i], tt.collapsed[i])
				}
			}
		})
	}
}
