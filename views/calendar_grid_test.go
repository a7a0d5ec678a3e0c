package views

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestWallClockSlots(t *testing.T) {
	berlin := mustLoc(t, "Europe/Berlin")
	tests := []struct {
		name      string
		start     time.Time
		days      int
		step      time.Duration
		loc       *time.Location
		wantCols  int
		wantHours []int
	}{
		{"plain week UTC", time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), 7, 30 * time.Minute, time.UTC, 336, []int{24, 24, 24, 24, 24, 24, 24}},
		{"Berlin week with the autumn change (Sun 25 Oct 2026)", time.Date(2026, 10, 19, 12, 0, 0, 0, berlin), 7, 30 * time.Minute, berlin, 338, []int{24, 24, 24, 24, 24, 24, 25}},
		{"Berlin week with the spring change (Sun 29 Mar 2026)", time.Date(2026, 3, 23, 0, 0, 0, 0, berlin), 7, 30 * time.Minute, berlin, 334, []int{24, 24, 24, 24, 24, 24, 23}},
		{"Berlin autumn day", time.Date(2026, 10, 25, 0, 0, 0, 0, berlin), 1, 30 * time.Minute, berlin, 50, []int{25}},
		{"Berlin spring day, hour step", time.Date(2026, 3, 29, 9, 0, 0, 0, berlin), 1, time.Hour, berlin, 23, []int{23}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slots, days := wallClockSlots(tt.start, tt.days, tt.step, tt.loc)
			if got := len(slots) - 1; got != tt.wantCols {
				t.Errorf("columns = %d, want %d", got, tt.wantCols)
			}
			if len(days) != len(tt.wantHours) {
				t.Fatalf("days = %d, want %d", len(days), len(tt.wantHours))
			}
			for i, d := range days {
				if d.Hours != tt.wantHours[i] {
					t.Errorf("day %d hours = %d, want %d", i, d.Hours, tt.wantHours[i])
				}
				if l := d.Date.In(tt.loc); l.Hour() != 0 || l.Minute() != 0 {
					t.Errorf("day %d starts at %s, want local midnight", i, l)
				}
				if !slots[d.FirstColumn].Equal(d.Date) {
					t.Errorf("day %d first column %s, want %s", i, slots[d.FirstColumn], d.Date)
				}
				if d.Line != d.FirstColumn+2 {
					t.Errorf("day %d line = %d, want %d", i, d.Line, d.FirstColumn+2)
				}
			}
			last := days[len(days)-1].Date
			wantEnd := time.Date(last.Year(), last.Month(), last.Day()+1, 0, 0, 0, 0, tt.loc)
			if !slots[len(slots)-1].Equal(wantEnd) {
				t.Errorf("end = %s, want %s", slots[len(slots)-1], wantEnd)
			}
		})
	}
}

func TestTicksAcrossAutumnChange(t *testing.T) {
	berlin := mustLoc(t, "Europe/Berlin")
	slots, days := wallClockSlots(time.Date(2026, 10, 25, 0, 0, 0, 0, berlin), 1, 30*time.Minute, berlin)
	got := ticks(slots, berlin, 1, days)
	if len(got) != 25 {
		t.Fatalf("ticks = %d, want 25 (02:00 twice)", len(got))
	}
	labels := []string{}
	for _, tk := range got[:5] {
		labels = append(labels, tk.Label)
	}
	want := []string{"00:00", "01:00", "02:00", "02:00", "03:00"}
	for i := range want {
		if labels[i] != want[i] {
			t.Errorf("tick %d = %q, want %q", i, labels[i], want[i])
		}
	}
	if got[0].Line != 2 || got[0].End != 4 || got[24].End != 52 {
		t.Errorf("tick lines = %d-%d … %d, want 2-4 … 52", got[0].Line, got[0].End, got[24].End)
	}
}

func gridFixture() GridInput {
	mon := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	gpus := []models.GPU{
		{ID: 1, NodeID: 10, Index: 0, Model: "A100", MemoryMiB: 81920, InService: true},
		{ID: 2, NodeID: 10, Index: 1, Model: "A100", MemoryMiB: 81920, InService: true},
		{ID: 3, NodeID: 10, Index: 2, Model: "A100", MemoryMiB: 81920, InService: false},
	}
	return GridInput{
		Nodes:    []models.Node{{ID: 10, Name: "node-a", GPUs: gpus}, {ID: 11, Name: "node-b", GPUs: []models.GPU{{ID: 4, NodeID: 11, Model: "H100", MemoryMiB: 81920, InService: true}}}},
		ViewerID: 7, Loc: time.UTC, Start: mon, Days: 1, Step: 30 * time.Minute,
		Now: mon.Add(10*time.Hour + 12*time.Minute), FreeSplit: 6, TickHours: 1,
	}
}

func TestBuildGridCells(t *testing.T) {
	in := gridFixture()
	day := in.Start
	in.Bookings = []models.Booking{
		{ID: 100, UserID: 7, GPUIDs: []int64{1, 2}, StartsAt: day.Add(9 * time.Hour), EndsAt: day.Add(11 * time.Hour), Status: models.StatusConfirmed},
		{ID: 101, UserID: 8, GPUIDs: []int64{1}, StartsAt: day.Add(14*time.Hour + 10*time.Minute), EndsAt: day.Add(15 * time.Hour), Status: models.StatusConfirmed},
		{ID: 102, UserID: 8, GPUIDs: []int64{2}, StartsAt: day.Add(-3 * time.Hour), EndsAt: day.Add(1 * time.Hour), Status: models.StatusConfirmed},
		{ID: 103, UserID: 8, GPUIDs: []int64{2}, StartsAt: day.Add(12 * time.Hour), EndsAt: day.Add(13 * time.Hour), Status: models.StatusCancelled},
	}
	g := BuildGrid(in)
	if g.Cols != 48 || g.NowLine != 20+2 || g.NowTenth != 4 {
		t.Fatalf("cols %d now line %d tenth %d, want 48, 22, 4", g.Cols, g.NowLine, g.NowTenth)
	}
	type cell struct {
		kind      CellKind
		line, end int
		booking   int64
		start     string
	}
	want := map[int64][]cell{
		1: {{CellPast, 2, 20, 0, "00:00"}, {CellMine, 20, 24, 100, "09:00"}, {CellFree, 24, 26, 0, "11:00"},
			{CellFree, 26, 30, 0, "12:00"}, {CellOther, 30, 32, 101, "14:10"}, {CellFree, 32, 38, 0, "15:00"}, {CellFree, 38, 50, 0, "18:00"}},
		2: {{CellOther, 2, 4, 102, "00:00"}, {CellPast, 4, 20, 0, "01:00"}, {CellMine, 20, 24, 100, "09:00"}, {CellFree, 24, 26, 0, "11:00"},
			{CellFree, 26, 38, 0, "12:00"}, {CellFree, 38, 50, 0, "18:00"}},
		3: {{CellOut, 2, 50, 0, "00:00"}},
	}
	if len(g.Nodes) != 2 || len(g.Nodes[0].Rows) != 3 {
		t.Fatalf("nodes/rows = %d/%d, want 2/3", len(g.Nodes), len(g.Nodes[0].Rows))
	}
	for _, row := range g.Nodes[0].Rows {
		w := want[row.GPU.ID]
		if len(row.Cells) != len(w) {
			t.Errorf("GPU %d: %d cells, want %d: %+v", row.GPU.ID, len(row.Cells), len(w), row.Cells)
			continue
		}
		for i, c := range row.Cells {
			var id int64
			if c.Booking != nil {
				id = c.Booking.ID
			}
			got := cell{c.Kind, c.Line, c.End, id, c.Start.Format("15:04")}
			if got != w[i] {
				t.Errorf("GPU %d cell %d = %+v, want %+v", row.GPU.ID, i, got, w[i])
			}
		}
	}
	r2 := g.Nodes[0].Rows[1].Cells
	if !r2[0].CutBefore || r2[0].CutAfter || !r2[2].Active || r2[2].CutBefore {
		t.Errorf("flags: cut before %v after %v, active %v", r2[0].CutBefore, r2[0].CutAfter, r2[2].Active)
	}
}

func TestBuildGridNowSlotStartsNow(t *testing.T) {
	in := gridFixture()
	g := BuildGrid(in)
	cells := g.Nodes[0].Rows[0].Cells
	if cells[1].Kind != CellFree || cells[1].Start.Format("15:04") != "10:12" {
		t.Errorf("first bookable cell = %s from %s, want free from 10:12 (now)", cells[1].Kind, cells[1].Start.Format("15:04"))
	}
}

func TestBuildGridFilters(t *testing.T) {
	tests := []struct {
		name   string
		nodeID int64
		model  string
		want   []string
		rows   int
	}{
		{"all", 0, "", []string{"node-a", "node-b"}, 4},
		{"node", 11, "", []string{"node-b"}, 1},
		{"model", 0, "A100", []string{"node-a"}, 3},
		{"none", 10, "H100", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := gridFixture()
			in.NodeID, in.Model = tt.nodeID, tt.model
			g := BuildGrid(in)
			var names []string
			rows := 0
			for _, n := range g.Nodes {
				names = append(names, n.Name)
				rows += len(n.Rows)
			}
			if len(names) != len(tt.want) || rows != tt.rows {
				t.Fatalf("nodes %v rows %d, want %v %d", names, rows, tt.want, tt.rows)
			}
			for i := range names {
				if names[i] != tt.want[i] {
					t.Errorf("node %d = %s, want %s", i, names[i], tt.want[i])
				}
			}
		})
	}
}

func TestBuildGridOverlappingRoundingNeverGoesBack(t *testing.T) {
	in := gridFixture()
	in.Now = in.Start.Add(-time.Hour)
	day := in.Start
	in.Bookings = []models.Booking{
		{ID: 1, UserID: 8, GPUIDs: []int64{1}, StartsAt: day.Add(2 * time.Hour), EndsAt: day.Add(2*time.Hour + 7*time.Minute), Status: models.StatusConfirmed},
		{ID: 2, UserID: 8, GPUIDs: []int64{1}, StartsAt: day.Add(2*time.Hour + 10*time.Minute), EndsAt: day.Add(2*time.Hour + 20*time.Minute), Status: models.StatusConfirmed},
	}
	g := BuildGrid(in)
	line := 2
	for _, c := range g.Nodes[0].Rows[0].Cells {
		if c.Line != line || c.End <= c.Line {
			t.Fatalf("cell %+v does not continue at line %d", c, line)
		}
		line = c.End
	}
	if line != 50 {
		t.Errorf("row ends at line %d, want 50", line)
	}
}

func TestBuildGridViewersSeeTheirOwnLocalTimes(t *testing.T) {
	start := time.Date(2026, 6, 3, 6, 0, 0, 0, time.UTC) // 14:00 in Shanghai, 08:00 in Berlin
	for _, tt := range []struct {
		zone string
		line int
	}{{"Asia/Shanghai", 2 + 28}, {"Europe/Berlin", 2 + 16}} {
		t.Run(tt.zone, func(t *testing.T) {
			in := gridFixture()
			in.Loc = mustLoc(t, tt.zone)
			in.Start = start
			in.Now = start.Add(-48 * time.Hour)
			in.Bookings = []models.Booking{{ID: 1, UserID: 8, GPUIDs: []int64{4}, StartsAt: start, EndsAt: start.Add(time.Hour), Status: models.StatusConfirmed}}
			g := BuildGrid(in)
			for _, c := range g.Nodes[1].Rows[0].Cells {
				if c.Booking != nil && (c.Line != tt.line || c.End != tt.line+2) {
					t.Errorf("booking at lines %d-%d, want %d-%d", c.Line, c.End, tt.line, tt.line+2)
				}
			}
		})
	}
}
