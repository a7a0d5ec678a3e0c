package views

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// migNode is node-m: GPU 0 whole, GPU 1 split 3 × 1g.10gb (listed after
// every GPU, as the store lists instances), GPU 2 whole.
func migNode() models.Node {
	gpus := []models.GPU{
		{ID: 20, NodeID: 30, Index: 0, Model: "A100", MemoryMiB: 81920, InService: true, Weight: 1},
		{ID: 21, NodeID: 30, Index: 1, Model: "A100", MemoryMiB: 81920, InService: true, MIG: true, MIGSlices: 7, Weight: 1},
		{ID: 22, NodeID: 30, Index: 2, Model: "A100", MemoryMiB: 81920, InService: true, Weight: 1},
	}
	for i, gi := range []int{9, 7, 8} { // out of order on purpose
		gpus = append(gpus, models.GPU{ID: int64(40 + i), NodeID: 30, Index: 64 + i, Model: "A100", MemoryMiB: 9728, InService: true,
			ParentID: 21, MIGProfile: "1g.10gb", MIGSlices: 1, MIGGI: gi, Weight: 1.0 / 7})
	}
	return models.Node{ID: 30, Name: "node-m", GPUs: gpus}
}

func TestUnitOrderAndNames(t *testing.T) {
	n := migNode()
	byID := gpusByID(n.GPUs)
	var got []string
	for _, g := range unitOrder(n.GPUs) {
		got = append(got, UnitName(g, byID)+"|"+SliceShare(g, byID))
	}
	want := "GPU 0||GPU 1||GPU 1 · 1g.10gb|1/7|GPU 1 · 1g.10gb|1/7|GPU 1 · 1g.10gb|1/7|GPU 2|"
	if strings.Join(got, "|") != want {
		t.Errorf("order = %q, want %q", strings.Join(got, "|"), want)
	}
	if ids := unitOrder(n.GPUs); ids[2].ID != 41 || ids[3].ID != 42 || ids[4].ID != 40 {
		t.Errorf("instances by gi: %d %d %d, want 41 42 40", ids[2].ID, ids[3].ID, ids[4].ID)
	}
	if got := UnitName(n.GPUs[3], nil); got != "MIG 1g.10gb" {
		t.Errorf("instance without its GPU = %q", got)
	}
	if got := MIGProfiles(append(n.GPUs, models.GPU{ID: 50, ParentID: 22, MIGProfile: "3g.40gb", MIGSlices: 3})); strings.Join(got, ",") != "1g.10gb,3g.40gb" {
		t.Errorf("profiles = %v", got)
	}
}

func TestBuildGridMIG(t *testing.T) {
	in := gridFixture()
	in.Nodes = []models.Node{migNode()}
	day := in.Start
	in.Bookings = []models.Booking{
		{ID: 200, UserID: 7, GPUIDs: []int64{41}, StartsAt: day.Add(9 * time.Hour), EndsAt: day.Add(12 * time.Hour), Status: models.StatusConfirmed},
	}
	g := BuildGrid(in)
	n := g.Nodes[0]
	var labels []string
	for _, r := range n.Rows {
		labels = append(labels, r.Label)
	}
	if want := "GPU 0,GPU 1,GPU 1 · 1g.10gb,GPU 1 · 1g.10gb,GPU 1 · 1g.10gb,GPU 2"; strings.Join(labels, ",") != want {
		t.Fatalf("rows = %q, want %q", strings.Join(labels, ","), want)
	}
	if n.GPUs != 5 || n.Free != 4 {
		t.Errorf("node counts %d units, %d free; want 5 (2 GPUs, 3 slices; the split GPU is none), 4", n.GPUs, n.Free)
	}
	split := n.Rows[1]
	if split.Instances != 3 {
		t.Errorf("split row instances = %d, want 3", split.Instances)
	}
	for _, c := range split.Cells {
		if c.Kind != CellSplit {
			t.Errorf("split GPU has a %s cell at line %d: it must not be bookable whole", c.Kind, c.Line)
		}
	}
	mine := n.Rows[2]
	if mine.GPU.ID != 41 || mine.Share != "1/7" {
		t.Errorf("first slice row = GPU %d share %q, want 41 and 1/7", mine.GPU.ID, mine.Share)
	}
	kinds := map[CellKind]int{}
	for _, c := range mine.Cells {
		kinds[c.Kind]++
	}
	if kinds[CellMine] != 1 || kinds[CellFree] == 0 {
		t.Errorf("booked slice cells = %v, want one of mine and free ones", kinds)
	}

	in.FreeOnly = true
	in.Now = day.Add(10 * time.Hour)
	g = BuildGrid(in)
	labels = nil
	for _, r := range g.Nodes[0].Rows {
		labels = append(labels, r.Label+":"+itoa64(r.GPU.ID))
	}
	if want := "GPU 0:20,GPU 1:21,GPU 1 · 1g.10gb:42,GPU 1 · 1g.10gb:40,GPU 2:22"; strings.Join(labels, ",") != want {
		t.Errorf("free only = %q, want %q", strings.Join(labels, ","), want)
	}
}

func TestFeedNamesMIGInstances(t *testing.T) {
	gpus := gpusByID(migNode().GPUs)
	if got, want := feedGPUCount([]int64{41}, gpus), "GPU 1 · 1g.10gb"; got != want {
		t.Errorf("summary part = %q, want %q", got, want)
	}
	if got, want := feedGPUCount([]int64{20, 22}, gpus), "2 × A100"; got != want {
		t.Errorf("whole GPUs = %q, want %q", got, want)
	}
	if got, want := feedGPUList([]int64{41, 42}, gpus), "GPU 1 · 1g.10gb A100, GPU 1 · 1g.10gb A100"; got != want {
		t.Errorf("list = %q, want %q", got, want)
	}
}
