package models_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// migGPUs is a node of one A100 split 7 × 1g.10gb (parent id 10, instances
// 11–17), one whole A100 (id 20), one A100 in MIG mode listed with a
// 3g.40gb (30, 31) and a 1g.10gb of another GPU out of service (40).
var migGPUs = func() []models.GPU {
	gs := []models.GPU{{ID: 10, Index: 0, Model: "A100", InService: true, MIG: true, MIGSlices: 7, Weight: 1}}
	for i := range 7 {
		gs = append(gs, models.GPU{ID: int64(11 + i), Index: 64 + i, Model: "A100", InService: true, ParentID: 10,
			MIGProfile: "1g.10gb", MIGSlices: 1, Weight: models.MIGWeight(1, 7)})
	}
	return append(gs,
		models.GPU{ID: 20, Index: 1, Model: "A100", InService: true, Weight: 1},
		models.GPU{ID: 30, Index: 2, Model: "A100", InService: true, MIG: true, MIGSlices: 7, Weight: 1},
		models.GPU{ID: 31, Index: 71, Model: "A100", InService: true, ParentID: 30, MIGProfile: "3g.40gb", MIGSlices: 3, Weight: models.MIGWeight(3, 7)},
		models.GPU{ID: 40, Index: 72, Model: "A100", InService: false, ParentID: 30, MIGProfile: "1g.10gb", MIGSlices: 1, Weight: models.MIGWeight(1, 7)})
}()

func migGPU(id int64) models.GPU {
	for _, g := range migGPUs {
		if g.ID == id {
			return g
		}
	}
	panic(id)
}

func TestMIGUnits(t *testing.T) {
	tests := []struct {
		name                       string
		gpu                        models.GPU
		instance, parent, bookable bool
		units                      int64
	}{
		{name: "a whole GPU", gpu: migGPU(20), bookable: true, units: 840},
		{name: "a GPU split into instances", gpu: migGPU(10), parent: true, units: 840},
		{name: "a 1g.10gb of seven", gpu: migGPU(11), instance: true, bookable: true, units: 120},
		{name: "a 3g.40gb of seven", gpu: migGPU(31), instance: true, bookable: true, units: 360},
		{name: "an instance out of service", gpu: migGPU(40), instance: true, units: 120},
		{name: "MIG on, no slices recorded (an older agent): bookable whole", gpu: models.GPU{MIG: true, InService: true}, bookable: true, units: 840},
		{name: "a GPU read without its weight counts whole", gpu: models.GPU{InService: true}, bookable: true, units: 840},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.gpu
			if got := g.IsMIGInstance(); got != tt.instance {
				t.Errorf("IsMIGInstance = %v, want %v", got, tt.instance)
			}
			if got := g.IsMIGParent(); got != tt.parent {
				t.Errorf("IsMIGParent = %v, want %v", got, tt.parent)
			}
			if got := g.Bookable(); got != tt.bookable {
				t.Errorf("Bookable = %v, want %v", got, tt.bookable)
			}
			if got := g.Units(); got != tt.units {
				t.Errorf("Units = %d, want %d", got, tt.units)
			}
		})
	}
}

// TestMIGWeightSums: the float weights stored add up to exact units, for
// every share an instance can have.
func TestMIGWeightSums(t *testing.T) {
	for total := 1; total <= 8; total++ {
		for slices := 1; slices <= total; slices++ {
			w := models.MIGWeight(slices, total)
			sum := 0.0
			for range total {
				sum += w
			}
			if got, want := models.WeightToUnits(sum), int64(slices)*models.WeightUnits; got != want {
				t.Errorf("%d × %d/%d summed: %d units, want %d", total, slices, total, got, want)
			}
			if got, want := (models.GPU{Weight: w}).Units()*int64(total), int64(slices)*models.WeightUnits; got != want {
				t.Errorf("%d × %d/%d each: %d units, want %d", total, slices, total, got, want)
			}
		}
	}
	if got := models.FormatGPUs(8 * 120); got != "1.14" {
		t.Errorf("FormatGPUs(8/7) = %q, want 1.14", got)
	}
}

func TestMIGSameUnit(t *testing.T) {
	tests := []struct {
		name string
		a, b int64
		want bool
	}{
		{name: "two 1g.10gb of one GPU", a: 11, b: 12, want: true},
		{name: "1g.10gb of two GPUs", a: 11, b: 40, want: true},
		{name: "1g.10gb and 3g.40gb", a: 11, b: 31},
		{name: "an instance and a whole GPU of its model", a: 11, b: 20},
		{name: "a whole GPU and a MIG parent of its model: same unit, but the parent is not bookable", a: 20, b: 10, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := migGPU(tt.a).SameUnit(migGPU(tt.b)); got != tt.want {
				t.Errorf("SameUnit = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMIGBookingRule: a GPU split into instances is refused whole; its
// instances, and instances mixed with whole GPUs, are accepted.
func TestMIGBookingRule(t *testing.T) {
	byID := map[int64]models.GPU{}
	for _, g := range migGPUs {
		byID[g.ID] = g
	}
	now := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		ids  []int64
		want string // the message key on gpu_ids, "" = accepted
	}{
		{name: "one instance", ids: []int64{11}},
		{name: "seven instances", ids: []int64{11, 12, 13, 14, 15, 16, 17}},
		{name: "instances and a whole GPU", ids: []int64{12, 20, 31}},
		{name: "the split GPU whole", ids: []int64{10}, want: "err.gpu_mig_parent"},
		{name: "the split GPU with one of its instances", ids: []int64{11, 10}, want: "err.gpu_mig_parent"},
		{name: "an instance out of service", ids: []int64{40}, want: "err.gpu_out_of_service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := models.NewBooking{UserID: 7, GPUIDs: tt.ids, StartsAt: now.Add(time.Hour), EndsAt: now.Add(2 * time.Hour)}
			_, err := models.ValidateNewBooking(req, byID, models.BookingLimits{Slot: 15 * time.Minute, MaxLength: 24 * time.Hour, MaxAhead: 30 * 24 * time.Hour, MaxNoteLen: 200, MaxGPUCount: 8}, now)
			got := ""
			if err != nil {
				got = models.AsError(err).Fields["gpu_ids"].Key
			}
			if got != tt.want {
				t.Errorf("gpu_ids = %q (%v), want %q", got, err, tt.want)
			}
		})
	}
}

// TestMIGServiceMoves: a booking on an instance leaving service moves to
// a free instance of its profile, never to a whole GPU, a split GPU or
// another profile.
func TestMIGServiceMoves(t *testing.T) {
	tests := []struct {
		name   string
		leave  int64
		on     []int64
		busy   []models.Booking
		wantTo int64
	}{
		{name: "to the lowest free 1g.10gb", leave: 11, on: []int64{11}, wantTo: 12},
		{name: "busy instances skipped", leave: 11, on: []int64{11}, busy: []models.Booking{bk(9, 90, []int64{12, 13}, 0, 100)}, wantTo: 14},
		{name: "no free 1g.10gb: no move, though a 3g.40gb and a whole A100 are free", leave: 11, on: []int64{11},
			busy: []models.Booking{bk(9, 90, []int64{12, 13, 14, 15, 16, 17}, 0, 100)}},
		{name: "a whole GPU never moves onto a split one", leave: 20, on: []int64{20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := models.PlanService(tt.leave, []models.Booking{bk(1, 20, tt.on, 10, 12)}, migGPUs, tt.busy, hour(0))
			to := int64(0)
			if len(got) == 1 && got[0].CanMove() {
				to = got[0].Moves[0].To
			}
			if len(got) != 1 || to != tt.wantTo {
				t.Errorf("moved to %d (%+v), want %d", to, got, tt.wantTo)
			}
		})
	}
}

// TestMIGPolicyWeights: limits count GPU-equivalents: a 1-GPU limit holds
// seven 1g slices of an A100 and not eight, and a weekly GPU-hour quota
// charges a slice a seventh of an hour per hour.
func TestMIGPolicyWeights(t *testing.T) {
	seventh := models.MIGWeight(1, 7)
	slices := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = seventh
		}
		return out
	}
	held := func(n int, w float64) func(*models.PolicyInput) {
		return func(in *models.PolicyInput) {
			in.Held = []models.Holding{{ID: 1, UserID: 7, StartsAt: at(shanghai, "2026-03-07 09:00"), EndsAt: at(shanghai, "2026-03-07 13:00"),
				Kind: models.KindStandard, Status: models.StatusConfirmed, GPUs: n, Weight: w}}
		}
	}
	with := func(ws []float64, more ...func(*models.PolicyInput)) func(*models.PolicyInput) {
		return func(in *models.PolicyInput) {
			for _, f := range more {
				f(in)
			}
			in.GPUWeights = ws
		}
	}
	one := []models.PolicyLimit{lim("global", 0, "max_gpus", "", 1)}
	runBreachCases(t, []breachCase{
		{name: "seven slices at once under a 1-GPU limit", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 12:00", gpus: 7,
			limits: one, edit: with(slices(7))},
		{name: "an eighth slice breaks it", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 12:00", gpus: 8,
			limits: one, edit: with(slices(8)), want: map[string][2]int64{"max_gpus": {1, 2}}},
		{name: "six held, one more is the seventh", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 12:00", gpus: 1,
			limits: one, edit: with(slices(1), held(6, 6*seventh))},
		{name: "seven held, one more is the eighth", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 12:00", gpus: 1,
			limits: one, edit: with(slices(1), held(7, 7*seventh)), want: map[string][2]int64{"max_gpus": {1, 2}}},
		{name: "seven slices held, a whole GPU breaks it", now: "2026-03-02 08:00", start: "2026-03-07 10:00", end: "2026-03-07 12:00", gpus: 1,
			limits: one, edit: with([]float64{1}, held(7, 7*seventh)), want: map[string][2]int64{"max_gpus": {1, 2}}},
		{name: "a week of 7 GPU-hours holds 49 slice-hours", now: "2026-03-02 08:00", start: "2026-03-04 00:00", end: "2026-03-06 01:00", gpus: 1,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpu_hours_week", "", 7*60)}, edit: with(slices(1))},
		{name: "and not 50", now: "2026-03-02 08:00", start: "2026-03-04 00:00", end: "2026-03-06 02:00", gpus: 1,
			limits: []models.PolicyLimit{lim("global", 0, "max_gpu_hours_week", "", 7*60)}, edit: with(slices(1)),
			want: map[string][2]int64{"max_gpu_hours_week": {420, 429}}},
	})
	seven := []models.Holding{{ID: 1, UserID: 7, StartsAt: at(shanghai, "2026-03-02 09:00"), EndsAt: at(shanghai, "2026-03-02 16:00"),
		Status: models.StatusConfirmed, GPUs: 7, Weight: 7 * seventh}}
	if got := models.UsedGPUMinutes(seven, at(shanghai, "2026-03-02 00:00"), at(shanghai, "2026-03-09 00:00")); got != 7*60 {
		t.Errorf("seven slices for 7 hours: %d GPU-minutes, want %d", got, 7*60)
	}
}

// TestMIGMessages: the eighth slice reads as 1.14 GPUs, not 2.
func TestMIGMessages(t *testing.T) {
	in := baseInput(shanghai, lim("global", 0, "max_gpus", "", 1))
	in.GPUWeights = make([]float64, 8)
	for i := range in.GPUWeights {
		in.GPUWeights[i] = models.MIGWeight(1, 7)
	}
	req := models.NewBooking{UserID: 7, GPUIDs: gpus(8), StartsAt: at(shanghai, "2026-03-07 10:00"), EndsAt: at(shanghai, "2026-03-07 12:00")}
	bs := models.EvaluatePolicy(req, in, at(shanghai, "2026-03-02 08:00"))
	if len(bs) != 1 || bs[0].Msg.Data["Actual"] != "1.14" || bs[0].Msg.Data["Limit"] != "1" {
		t.Errorf("breaches %+v, want max_gpus with Actual 1.14 and Limit 1", bs)
	}
}

// TestMIGRequests: a priority request never picks a split GPU or an
// instance by model, and its approval is refused once its GPU is split.
func TestMIGRequests(t *testing.T) {
	_, ids := models.GPUsToRequest(migGPUs, 0, "A100", 1, nil)
	if len(ids) != 1 || ids[0] != 20 {
		t.Errorf("picked %v, want the whole A100 (20)", ids)
	}
	if _, ids := models.GPUsToRequest(migGPUs, 0, "A100", 2, nil); ids != nil {
		t.Errorf("picked %v for two A100s, want none: the others are split or slices", ids)
	}
	err := models.RequireInService(migGPUs, []int64{20, 10})
	if e := models.AsError(err); models.ErrorCode(err) != models.ECONFLICT || e.Msg.Key != "err.gpu_mig_parent" {
		t.Errorf("approval on a split GPU: %v, want ECONFLICT err.gpu_mig_parent", err)
	}
	if err := models.RequireInService(migGPUs, []int64{20, 11}); err != nil {
		t.Errorf("approval on a whole GPU and a slice: %v", err)
	}
}

// TestUnitName: a unit is named by its GPU's index, never an instance's
// own (64 and up), in every language.
func TestUnitName(t *testing.T) {
	gpus := []models.GPU{{ID: 1, Index: 7, MIG: true, MIGSlices: 7}, {ID: 2, Index: 64, ParentID: 1, MIGProfile: "1g.10gb"},
		{ID: 3, Index: 0}, {ID: 4, Index: 65, ParentID: 99, MIGProfile: "3g.40gb"}}
	got := models.UnitNames(gpus)
	want := map[int64]string{1: "GPU 7", 2: "GPU 7 · 1g.10gb", 3: "GPU 0", 4: "MIG 3g.40gb"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("unit %d = %q, want %q", id, got[id], w)
		}
	}
}
