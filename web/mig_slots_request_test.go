package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestSlotsProfileNoRequest: find a slot for a MIG profile whose only
// slice is busy now answers the later slot and, where a whole-GPU search
// offers a priority request, says instead that requests ask for whole
// GPUs, not slices (in English and Chinese): the request page would ask
// for something other than what was searched.
func TestSlotsProfileNoRequest(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			f.addNode(t, "node-c", 8, "NVIDIA A100-SXM4-80GB", 81920)
			f.env.SplitMIG("node-c", map[int][]string{7: {"1g.10gb"}})
			nodes, err := f.env.DB.Nodes(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var slice int64
			for _, n := range nodes {
				for _, g := range n.GPUs {
					if g.IsMIGInstance() {
						slice = g.ID
					}
				}
			}
			f.book(t, f.bob, []int64{slice}, 0, 3, "")
			for u, note := range map[string]string{"en": "Priority requests ask for whole GPUs, not MIG slices", "zh-CN": "优先申请只能申请整块 GPU，不能申请 MIG 切片"} {
				c := f.signedIn(f.alice)
				if u == "zh-CN" {
					c = f.signedIn(f.erin)
				}
				res := c.Get("/slots?gpus=1&hours=2&profile=1g.10gb")
				if res.Code != http.StatusOK {
					t.Fatalf("%s: slots: %d", u, res.Code)
				}
				if got := res.Doc.Find(testid("slot-0")).Text(); !strings.Contains(got, "GPU 7 · 1g.10gb") {
					t.Errorf("%s: first slot = %q, want the slice after Bob's booking", u, got)
				}
				if n := res.Doc.Find(testid("offer-request")).Length(); n != 0 {
					t.Errorf("%s: a slice search offers a priority request (for whole GPUs)", u)
				}
				if got := res.Doc.Find(testid("no-slice-request")).Text(); !strings.Contains(got, note) {
					t.Errorf("%s: note = %q, want %q", u, got, note)
				}
			}
		})
	}
}
