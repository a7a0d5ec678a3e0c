package models

import (
	"slices"
	"testing"
)

func TestGPUsToRequest(t *testing.T) {
	gpus := []GPU{
		{ID: 1, NodeID: 10, Model: "A100", InService: true},
		{ID: 2, NodeID: 10, Model: "A100", InService: false},
		{ID: 3, NodeID: 10, Model: "V100", InService: true},
		{ID: 4, NodeID: 20, Model: "A100", InService: true},
		{ID: 5, NodeID: 20, Model: "A100", InService: true},
		{ID: 6, NodeID: 20, Model: "A100", InService: true},
	}
	for _, c := range []struct {
		name     string
		node     int64
		model    string
		count    int
		prefer   []int64
		wantNode int64
		want     []int64
	}{
		{"first node with enough", 0, "a100", 2, nil, 20, []int64{4, 5}},
		{"out of service skipped, other model skipped", 10, "A100", 2, nil, 0, nil},
		{"the node asked", 10, "", 2, nil, 10, []int64{1, 3}},
		{"free ones first", 20, "A100", 2, []int64{6}, 20, []int64{4, 6}},
		{"one GPU anywhere", 0, "", 1, nil, 10, []int64{1}},
		{"too many", 0, "A100", 4, nil, 0, nil},
		{"none asked", 0, "", 0, nil, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, got := GPUsToRequest(gpus, c.node, c.model, c.count, c.prefer)
			if n != c.wantNode || !slices.Equal(got, c.want) {
				t.Errorf("GPUsToRequest = %d %v, want %d %v", n, got, c.wantNode, c.want)
			}
		})
	}
}

func TestRequireInService(t *testing.T) {
	gpus := []GPU{{ID: 1, Index: 0, InService: true}, {ID: 2, Index: 1, OutOfServiceReason: "fan"}, {ID: 3, Index: 2, InService: true}}
	for _, c := range []struct {
		name string
		ids  []int64
		want string // the GPU named, "" for no error
	}{
		{"all in service", []int64{1, 3}, ""},
		{"one out", []int64{1, 2}, "GPU 1"},
		{"none asked", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := RequireInService(gpus, c.ids)
			if c.want == "" {
				if err != nil {
					t.Errorf("err = %v, want none", err)
				}
				return
			}
			e := AsError(err)
			if ErrorCode(err) != ECONFLICT || e.Msg.Key != "request.err.out_of_service" || e.Msg.Data["GPU"] != c.want || e.Msg.Data["Reason"] != "fan" {
				t.Errorf("err = %+v, want ECONFLICT naming %s (fan)", e, c.want)
			}
		})
	}
}
