package models_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// planT0 is the planner tests' clock; hour(h) is h hours after it.
var planT0 = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

func hour(h float64) time.Time { return planT0.Add(time.Duration(h * float64(time.Hour))) }

// planGPUs is a node of four A100s (ids 1–4, indexes 0–3) and one H100 (id 5).
var planGPUs = []models.GPU{
	{ID: 1, Index: 0, Model: "A100", InService: true}, {ID: 2, Index: 1, Model: "A100", InService: true},
	{ID: 3, Index: 2, Model: "A100", InService: true}, {ID: 4, Index: 3, Model: "A100", InService: true},
	{ID: 5, Index: 4, Model: "H100", InService: true},
}

func bk(id, user int64, gpus []int64, start, end float64) models.Booking {
	return models.Booking{ID: id, UserID: user, GPUIDs: gpus, StartsAt: hour(start), EndsAt: hour(end),
		Kind: models.KindStandard, Status: models.StatusConfirmed}
}

// want is one expected row of a plan: booking, action, GPUs afterwards,
// kept parts (as hours) and the GPU-hours lost.
type want struct {
	id     int64
	action string
	gpus   []int64
	keep   [][2]float64
	kgpus  [][]int64 // the GPUs of each kept part; nil: every part holds gpus
	taken  []int64
	lostH  float64
	own    bool
	whole  bool
}

func TestPlanPreemption(t *testing.T) {
	// The request: user 100 of team {100, 10} wants GPUs 1 and 2 from 10:00 to 13:00.
	req := models.PriorityRequest{ID: 9, UserID: 100, GPUIDs: []int64{1, 2}, StartsAt: hour(10), EndsAt: hour(13)}
	team := []int64{100, 10}
	blockAll := func(start, end float64) []models.Booking { // GPUs 3 and 4 taken: no move possible
		return []models.Booking{bk(900, 90, []int64{3, 4}, start, end)}
	}
	tests := []struct {
		name  string
		inWay []models.Booking
		busy  []models.Booking
		gpus  []models.GPU
		now   float64
		whole []int64 // owners whose multi-GPU bookings are all or nothing
		want  []want
	}{
		{name: "an all-or-nothing booking gives up all its GPUs over the window, and says so",
			inWay: []models.Booking{bk(1, 20, []int64{2, 3}, 12, 16)}, busy: []models.Booking{bk(900, 90, []int64{4}, 0, 100)}, whole: []int64{20},
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{2, 3}, keep: [][2]float64{{13, 16}}, lostH: 2, whole: true}}},
		{name: "an all-or-nothing booking the request needs all of is split as any other",
			inWay: []models.Booking{bk(1, 20, []int64{1, 2}, 12, 16)}, busy: blockAll(0, 100), whole: []int64{20},
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{1, 2}, keep: [][2]float64{{13, 16}}, lostH: 2}}},
		{name: "the free GPU goes to the all-or-nothing booking before the other team's bigger loss",
			inWay: []models.Booking{bk(1, 20, []int64{1}, 11, 20), bk(2, 30, []int64{2, 4}, 12, 13)},
			busy:  []models.Booking{}, whole: []int64{30},
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{1}, keep: [][2]float64{{13, 20}}, lostH: 2},
				{id: 2, action: models.GiveWayMove, gpus: []int64{3, 4}, keep: [][2]float64{{12, 13}}}}},
		{name: "a future booking moves to a free GPU of the same model",
			inWay: []models.Booking{bk(1, 20, []int64{2}, 9, 57)},
			want:  []want{{id: 1, action: models.GiveWayMove, gpus: []int64{3}, keep: [][2]float64{{9, 57}}}}},
		{name: "48-hour booking overlapped by 2 hours is split, not cancelled",
			inWay: []models.Booking{bk(1, 20, []int64{2}, 11, 59)}, busy: blockAll(0, 100),
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{2}, keep: [][2]float64{{13, 59}}, taken: []int64{2}, lostH: 2}}},
		{name: "a booking around the request keeps the parts before and after",
			inWay: []models.Booking{bk(1, 20, []int64{1}, 9, 33.5)}, busy: blockAll(0, 100),
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{1}, keep: [][2]float64{{9, 10}, {13, 33.5}}, lostH: 3}}},
		{name: "a booking inside the request is cancelled when it cannot move",
			inWay: []models.Booking{bk(1, 20, []int64{1}, 10.5, 12)}, busy: blockAll(0, 100),
			want: []want{{id: 1, action: models.GiveWayCancel, gpus: []int64{1}, lostH: 1.5}}},
		{name: "a booking inside the request moves when it can",
			inWay: []models.Booking{bk(1, 20, []int64{1}, 10.5, 12)}, busy: []models.Booking{bk(900, 90, []int64{3}, 0, 100)},
			want: []want{{id: 1, action: models.GiveWayMove, gpus: []int64{4}, keep: [][2]float64{{10.5, 12}}}}},
		{name: "a running booking is split, never moved: it keeps its start",
			inWay: []models.Booking{bk(1, 20, []int64{2}, 8, 20)}, now: 9,
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{2}, keep: [][2]float64{{8, 10}, {13, 20}}, lostH: 3}}},
		{name: "a multi-GPU booking gives up only the GPU the request needs, only over the request",
			inWay: []models.Booking{bk(1, 20, []int64{2, 3}, 12, 16)}, busy: []models.Booking{bk(900, 90, []int64{4}, 0, 100)},
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{3}, keep: [][2]float64{{12, 13}, {13, 16}},
				kgpus: [][]int64{{3}, {2, 3}}, taken: []int64{2}, lostH: 1}}},
		{name: "a 4-GPU booking around a 2-GPU request keeps all four before and after, two during",
			inWay: []models.Booking{bk(1, 20, []int64{1, 2, 3, 4}, 9, 20)}, now: 9.5,
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{1, 2, 3, 4}, keep: [][2]float64{{9, 10}, {10, 13}, {13, 20}},
				kgpus: [][]int64{{1, 2, 3, 4}, {3, 4}, {1, 2, 3, 4}}, taken: []int64{1, 2}, lostH: 6}}},
		{name: "a 2-GPU booking inside the request keeps its other GPU instead of being cancelled",
			inWay: []models.Booking{bk(1, 20, []int64{2, 4}, 10.5, 12)}, busy: blockAll(0, 100),
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{4}, keep: [][2]float64{{10.5, 12}},
				kgpus: [][]int64{{4}}, taken: []int64{2}, lostH: 1.5}}},
		{name: "a multi-GPU booking moves only the GPU the request needs",
			inWay: []models.Booking{bk(1, 20, []int64{2, 3}, 12, 16)},
			want:  []want{{id: 1, action: models.GiveWayMove, gpus: []int64{3, 4}, keep: [][2]float64{{12, 16}}}}},
		{name: "the other model never takes a moved booking",
			inWay: []models.Booking{bk(1, 20, []int64{1}, 11, 12)}, busy: blockAll(0, 100),
			gpus: planGPUs, want: []want{{id: 1, action: models.GiveWayCancel, gpus: []int64{1}, lostH: 1}}},
		{name: "an out-of-service GPU takes nothing",
			inWay: []models.Booking{bk(1, 20, []int64{1}, 11, 12)}, busy: []models.Booking{bk(900, 90, []int64{3}, 0, 100)},
			gpus: []models.GPU{planGPUs[0], planGPUs[1], planGPUs[2], {ID: 4, Index: 3, Model: "A100"}},
			want: []want{{id: 1, action: models.GiveWayCancel, gpus: []int64{1}, lostH: 1}}},
		{name: "one free GPU goes to the other team; the own team's booking is split",
			inWay: []models.Booking{bk(1, 10, []int64{1}, 11, 20), bk(2, 20, []int64{2}, 11, 14)},
			busy:  []models.Booking{bk(900, 90, []int64{4}, 0, 100)},
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{1}, keep: [][2]float64{{13, 20}}, lostH: 2, own: true},
				{id: 2, action: models.GiveWayMove, gpus: []int64{3}, keep: [][2]float64{{11, 14}}}}},
		{name: "among other teams, the free GPU saves the bigger loss",
			inWay: []models.Booking{bk(1, 20, []int64{1}, 12, 20), bk(2, 30, []int64{2}, 10, 13)},
			busy:  []models.Booking{bk(900, 90, []int64{4}, 0, 100)},
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{1}, keep: [][2]float64{{13, 20}}, lostH: 1},
				{id: 2, action: models.GiveWayMove, gpus: []int64{3}, keep: [][2]float64{{10, 13}}}}},
		{name: "a free GPU busy later than the request but within the booking does not take it",
			inWay: []models.Booking{bk(1, 20, []int64{2}, 11, 30)}, busy: []models.Booking{bk(900, 90, []int64{3}, 29, 40), bk(901, 90, []int64{4}, 0, 12)},
			want: []want{{id: 1, action: models.GiveWaySplit, gpus: []int64{2}, keep: [][2]float64{{13, 30}}, lostH: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gpus := tt.gpus
			if gpus == nil {
				gpus = planGPUs[:4]
			}
			busy := append(slices.Clone(tt.busy), tt.inWay...)
			got, err := models.PlanPreemption(models.PreemptInput{Request: req, InWay: tt.inWay, Busy: busy, GPUs: gpus, Team: team, Whole: tt.whole, Now: hour(tt.now)})
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("plan has %d rows, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				p := got[i]
				var keep [][2]float64
				for _, s := range p.Keep {
					keep = append(keep, [2]float64{s.Start.Sub(planT0).Hours(), s.End.Sub(planT0).Hours()})
				}
				lost := float64(p.LostGPUSeconds) / 3600
				kgpus, wantK := partGPUs(p.Keep), w.kgpus
				if wantK == nil {
					for range w.keep {
						wantK = append(wantK, w.gpus)
					}
				}
				if w.taken == nil && w.action != models.GiveWayMove {
					w.taken = w.gpus
				}
				if p.Booking.ID != w.id || p.Action != w.action || !slices.Equal(p.GPUIDs, w.gpus) ||
					fmt.Sprint(keep) != fmt.Sprint(w.keep) || fmt.Sprint(kgpus) != fmt.Sprint(wantK) ||
					!slices.Equal(p.Taken, w.taken) || lost != w.lostH || p.OwnTeam != w.own || p.Whole != w.whole {
					t.Errorf("row %d = {id %d %s gpus %v keep %v %v taken %v lost %v own %v whole %v}, want %+v",
						i, p.Booking.ID, p.Action, p.GPUIDs, keep, kgpus, p.Taken, lost, p.OwnTeam, p.Whole, w)
				}
			}
		})
	}
}

func partGPUs(parts []models.Part) [][]int64 {
	var out [][]int64
	for _, p := range parts {
		out = append(out, p.GPUIDs)
	}
	return out
}

func TestPlanPreemptionNeverTouchesPriority(t *testing.T) {
	req := models.PriorityRequest{ID: 9, UserID: 100, GPUIDs: []int64{1}, StartsAt: hour(10), EndsAt: hour(13)}
	prio := bk(1, 20, []int64{1}, 11, 12)
	prio.Kind = models.KindPriority
	_, err := models.PlanPreemption(models.PreemptInput{Request: req, InWay: []models.Booking{bk(2, 30, []int64{1}, 9, 11), prio}, GPUs: planGPUs})
	if models.ErrorCode(err) != models.ECONFLICT {
		t.Fatalf("plan with a priority booking in the way: %v, want ECONFLICT", err)
	}
}

func TestPlanFingerprint(t *testing.T) {
	req := models.PriorityRequest{ID: 9, UserID: 100, GPUIDs: []int64{1}, StartsAt: hour(10), EndsAt: hour(13)}
	plan := func(b models.Booking) []models.Preemption {
		p, err := models.PlanPreemption(models.PreemptInput{Request: req, InWay: []models.Booking{b}, GPUs: planGPUs[:1]})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := models.PlanFingerprint(9, plan(bk(1, 20, []int64{1}, 9, 12)))
	tests := []struct {
		name string
		got  string
		same bool
	}{
		{"the same plan again", models.PlanFingerprint(9, plan(bk(1, 20, []int64{1}, 9, 12))), true},
		{"the booking was extended meanwhile", models.PlanFingerprint(9, plan(bk(1, 20, []int64{1}, 9, 14))), false},
		{"another booking", models.PlanFingerprint(9, plan(bk(2, 20, []int64{1}, 9, 12))), false},
		{"another request", models.PlanFingerprint(8, plan(bk(1, 20, []int64{1}, 9, 12))), false},
		{"nothing in the way", models.PlanFingerprint(9, nil), false},
	}
	for _, tt := range tests {
		if (tt.got == a) != tt.same {
			t.Errorf("%s: fingerprint %s vs %s, same = %v", tt.name, tt.got, a, !tt.same)
		}
	}
}

func TestFormatGPUHours(t *testing.T) {
	for _, tt := range []struct {
		sec  int64
		want string
	}{{0, "0"}, {9000, "2.5"}, {170700, "47.4"}, {10800, "3"}, {60, "0"}, {200, "0.1"}} {
		if got := models.FormatGPUHours(tt.sec); got != tt.want {
			t.Errorf("FormatGPUHours(%d) = %q, want %q", tt.sec, got, tt.want)
		}
	}
}
