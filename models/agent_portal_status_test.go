package models

import (
	"slices"
	"testing"
)

func TestSummarizeNode(t *testing.T) {
	ada := &Booking{ID: 1, UserName: "Ada"}
	bob := &Booking{ID: 2, UserName: "Bob"}
	whole := func(id int64) GPU { return GPU{ID: id, NodeID: 9, InService: true} }
	parent := GPU{ID: 10, NodeID: 9, InService: true, MIG: true, MIGSlices: 7}
	slice := func(id int64, in bool) GPU {
		return GPU{ID: id, NodeID: 9, ParentID: 10, InService: in, MIGProfile: "1g.10gb"}
	}
	out := whole(3)
	out.InService = false
	tests := []struct {
		name string
		gpus []GPUStatus
		want NodeSummary
	}{
		{"empty node", nil, NodeSummary{}},
		{"whole GPUs", []GPUStatus{
			{GPU: whole(1), Booking: bob},
			{GPU: whole(2), Booking: ada, Idle: &IdleReport{BookingID: 1}},
			{GPU: out},
			{GPU: whole(4), Booking: bob},
			{GPU: whole(5), Unbooked: true},
			{GPU: whole(6), Violations: []Violation{{GPUID: 6}}},
		}, NodeSummary{Units: 6, Booked: 3, Free: 2, Out: 1, Flagged: 2, Idle: 1, Holders: []string{"Ada", "Bob"}}},
		{"booked and out of service", []GPUStatus{
			{GPU: out, Booking: ada},
		}, NodeSummary{Units: 1, Booked: 1, Free: 0, Out: 1, Holders: []string{"Ada"}}},
		{"MIG split GPU counts its slices", []GPUStatus{
			{GPU: whole(1), Booking: ada},
			{GPU: parent, Violations: []Violation{{GPUID: 10}}},
			{GPU: slice(11, true), Booking: bob, Idle: &IdleReport{BookingID: 2}},
			{GPU: slice(12, true)},
			{GPU: slice(13, false)},
		}, NodeSummary{Units: 4, Booked: 2, Free: 1, Out: 1, Flagged: 1, Idle: 1, Holders: []string{"Ada", "Bob"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SummarizeNode(NodeStatus{GPUs: tt.gpus})
			if got.Units != tt.want.Units || got.Booked != tt.want.Booked || got.Free != tt.want.Free || got.Out != tt.want.Out ||
				got.Flagged != tt.want.Flagged || got.Idle != tt.want.Idle || !slices.Equal(got.Holders, tt.want.Holders) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLiveScopeGPUIDs(t *testing.T) {
	gpus := []GPU{{ID: 1, NodeID: 7}, {ID: 2, NodeID: 7}, {ID: 3, NodeID: 8}, {ID: 4, NodeID: 9}}
	tests := []struct {
		name  string
		scope LiveScope
		want  []int64
		isNil bool
	}{
		{"all reads every GPU", LiveScope{All: true, Nodes: []int64{7}}, nil, true},
		{"nothing open reads none", LiveScope{}, []int64{}, false},
		{"open nodes", LiveScope{Nodes: []int64{9, 7}}, []int64{1, 2, 4}, false},
		{"a node that does not exist", LiveScope{Nodes: []int64{42}}, []int64{}, false},
		{"all of a page", LiveScope{All: true, Page: []int64{8, 9}}, []int64{3, 4}, false},
		{"open on and off the page", LiveScope{Nodes: []int64{7, 9}, Page: []int64{8, 9}}, []int64{4}, false},
		{"an empty page", LiveScope{All: true, Page: []int64{}}, []int64{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.scope.GPUIDs(gpus)
			if (got == nil) != tt.isNil || !slices.Equal(got, tt.want) {
				t.Errorf("got %v (nil %v), want %v (nil %v)", got, got == nil, tt.want, tt.isNil)
			}
		})
	}
}

// TestBuildLiveStatusOutOfScope: a GPU whose minutes were not read still
// gets a row with its booking and an empty sparkline of the hour.
func TestBuildLiveStatusOutOfScope(t *testing.T) {
	in := LiveInputs{
		GPUs:     []GPU{{ID: 1, NodeID: 9}, {ID: 2, NodeID: 9}},
		Nodes:    []AgentNode{{NodeID: 9, NodeName: "n1"}},
		Bookings: []Booking{{ID: 5, GPUIDs: []int64{2}, UserName: "Ada"}},
	}
	out := BuildLiveStatus(in, ap0)
	if len(out) != 1 || len(out[0].GPUs) != 2 {
		t.Fatalf("nodes = %+v", out)
	}
	for i, g := range out[0].GPUs {
		if len(g.Spark) != SparkMinutes || slices.ContainsFunc(g.Spark, func(v *float64) bool { return v != nil }) || g.Latest != nil {
			t.Errorf("GPU %d: spark %v, latest %v; want an empty hour", i, g.Spark, g.Latest)
		}
	}
	if b := out[0].GPUs[1].Booking; b == nil || b.UserName != "Ada" {
		t.Errorf("GPU 2 booking = %+v, want Ada's", b)
	}
}

// TestLiveScopePageGPUs: a page keeps its nodes' GPUs in their order; an
// unpaged scope hands back the list itself.
func TestLiveScopePageGPUs(t *testing.T) {
	gpus := []GPU{{ID: 1, NodeID: 10}, {ID: 2, NodeID: 20}, {ID: 3, NodeID: 10}, {ID: 4, NodeID: 30}}
	for _, tt := range []struct {
		name string
		page []int64
		want []int64
	}{
		{"unpaged", nil, []int64{1, 2, 3, 4}},
		{"two nodes", []int64{30, 10}, []int64{1, 3, 4}},
		{"an empty page", []int64{}, nil},
	} {
		var got []int64
		for _, g := range (LiveScope{Page: tt.page}).PageGPUs(gpus) {
			got = append(got, g.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if all := (LiveScope{}).PageGPUs(gpus); &all[0] != &gpus[0] {
		t.Error("unpaged: a copy of the list")
	}
}
