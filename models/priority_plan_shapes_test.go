package models_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// TestPlanPreemptionShapes runs the planner over every request of 1–8 GPUs
// against bookings of 1–8 GPUs in its way on an 8-GPU node, with and
// without free GPUs to move to, and checks the promise: each row's loss is
// what its kept parts leave out, no kept part touches a GPU the request
// takes during the request, and the whole plan never costs more than the
// request's hours × GPUs unless a row names the all-or-nothing booking
// that forced it.
func TestPlanPreemptionShapes(t *testing.T) {
	var gpus []models.GPU
	for i := range 10 { // 8 A100s in the way, 2 spare ones for moves
		gpus = append(gpus, models.GPU{ID: int64(i + 1), Index: i, Model: "A100", InService: true})
	}
	ids := func(from, n int) []int64 {
		var out []int64
		for i := range n {
			out = append(out, int64(from+i))
		}
		return out
	}
	spans := [][2]float64{{9, 20}, {11, 12}, {8, 11}, {12, 15}}
	for need := 1; need <= 8; need++ {
		for size := 1; size <= 8; size++ {
			for _, movable := range []bool{false, true} {
				for _, sp := range spans {
					for _, whole := range []bool{false, true} {
						name := fmt.Sprintf("request %d GPUs, bookings of %d, %v–%v, movable %v, all or nothing %v", need, size, sp[0], sp[1], movable, whole)
						req := models.PriorityRequest{ID: 1, UserID: 100, GPUIDs: ids(1, need), StartsAt: hour(10), EndsAt: hour(13)}
						var inWay []models.Booking
						for first := 1; first <= 8; first += size {
							n := min(size, 9-first)
							if first <= need {
								inWay = append(inWay, bk(int64(first), 20, ids(first, n), sp[0], sp[1]))
							}
						}
						busy := slices.Clone(inWay)
						if !movable {
							busy = append(busy, bk(900, 90, []int64{9, 10}, 0, 100))
						}
						in := models.PreemptInput{Request: req, InWay: inWay, Busy: busy, GPUs: gpus, Now: hour(9.5)}
						if whole {
							in.Whole = []int64{20}
						}
						plan, err := models.PlanPreemption(in)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						checkShape(t, name, req, plan)
					}
				}
			}
		}
	}
}

func checkShape(t *testing.T, name string, req models.PriorityRequest, plan []models.Preemption) {
	t.Helper()
	gpuSec := func(s, e time.Time, n int) int64 { return int64(e.Sub(s)/time.Second) * int64(n) }
	for _, p := range plan {
		b := p.Booking
		kept := int64(0)
		for _, k := range p.Keep {
			kept += gpuSec(k.Start, k.End, len(k.GPUIDs))
			for _, g := range k.GPUIDs {
				if slices.Contains(req.GPUIDs, g) && models.Overlaps(k.Start, k.End, req.StartsAt, req.EndsAt) {
					t.Errorf("%s: booking %d keeps GPU %d in the request's time", name, b.ID, g)
				}
			}
		}
		if got, want := p.LostGPUSeconds, gpuSec(b.StartsAt, b.EndsAt, len(b.GPUIDs))-kept; got != want {
			t.Errorf("%s: booking %d (%s) shown losing %d GPU-s, its parts leave out %d", name, b.ID, p.Action, got, want)
		}
	}
	named := slices.ContainsFunc(plan, func(p models.Preemption) bool { return p.Whole })
	if lost, most := models.LostGPUSeconds(plan), gpuSec(req.StartsAt, req.EndsAt, len(req.GPUIDs)); lost > most && !named {
		t.Errorf("%s: the plan loses %d GPU-s, more than the request's %d, and names no all-or-nothing booking", name, lost, most)
	}
}
