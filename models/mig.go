package models

import (
	"math"
	"strconv"
)

// A GPU in MIG mode is shared as its instances: each instance is booked,
// limited and charged like a GPU of its own, at its share of the GPU
// (its weight), and the GPU itself is then not bookable whole, since CUDA
// cannot reach it as one device while it is split.

// WeightUnits is how many units make one GPU-equivalent in the policy's
// sums. 840 is a multiple of every share an instance can have (1 to 8
// slices of a GPU of up to 8), so seven 1g slices of an A100 (120 units
// each) make exactly one GPU, where seven float sevenths need not.
const WeightUnits = 840

// MIGGoneReason marks an instance that its agent no longer lists (the
// GPU was split another way, or MIG was turned off): it keeps its row,
// its index and its history, and is bookable again should it come back.
const MIGGoneReason = "MIG instance no longer reported by agent"

// MIGSplitReason is what the holders of bookings on a whole GPU read when
// its agent lists it split into MIG instances: it cannot be used whole.
const MIGSplitReason = "GPU split into MIG instances"

// IsMIGParent reports whether the GPU is split into MIG instances now:
// a GPU row (not an instance) with MIG on and its slices recorded, which
// the inventory does only while the agent lists its instances. Such a GPU
// is booked through its instances, never whole.
func (g GPU) IsMIGParent() bool { return g.ParentID == 0 && g.MIG && g.MIGSlices > 0 }

// Bookable reports whether the unit may be given to a booking: in service,
// and not a GPU split into instances.
func (g GPU) Bookable() bool { return g.InService && !g.IsMIGParent() }

// Units is the unit's weight in WeightUnits: WeightUnits for a whole GPU
// (or one read without its weight), its share for an instance.
func (g GPU) Units() int64 {
	if !(g.Weight > 0) || g.Weight >= 1 {
		return WeightUnits
	}
	return WeightToUnits(g.Weight)
}

// WeightToUnits is a sum of weights (GPU-equivalents) in WeightUnits,
// rounded to the nearest unit: the weights stored are float shares, and
// a sum of them is within far less than a unit of the exact share.
func WeightToUnits(w float64) int64 {
	if !(w > 0) || math.IsInf(w, 0) {
		return 0
	}
	return int64(math.Round(w * WeightUnits))
}

// FormatGPUs writes units as GPU-equivalents for people: "1", "1.14".
func FormatGPUs(units int64) string { return FormatHours(float64(units) / WeightUnits) }

// SameUnit reports whether a booking on g may be moved onto o without its
// holder noticing the difference: the same model and, for an instance,
// the same MIG profile; an instance never moves to a whole GPU or back.
func (g GPU) SameUnit(o GPU) bool {
	return g.Model == o.Model && g.IsMIGInstance() == o.IsMIGInstance() && g.MIGProfile == o.MIGProfile
}

// UnitName names a bookable unit as every page, notice, mail and export
// does, in any language: a whole GPU by its index on its node, "GPU 3",
// and a MIG instance by its GPU's index and its profile, "GPU 3 · 1g.10gb",
// as the calendar shows it; an instance's own index (64 and up) means
// nothing to people. parentIndex is the index of the instance's GPU, or
// -1 when it is not known: the instance is then "MIG 1g.10gb".
func UnitName(g GPU, parentIndex int) string {
	if !g.IsMIGInstance() {
		return "GPU " + strconv.Itoa(g.Index)
	}
	if parentIndex < 0 {
		return "MIG " + g.MIGProfile
	}
	return "GPU " + strconv.Itoa(parentIndex) + " · " + g.MIGProfile
}

// UnitNames names every unit of gpus by UnitName, by ID: an instance finds
// its GPU's index in the same list.
func UnitNames(gpus []GPU) map[int64]string {
	index := make(map[int64]int, len(gpus))
	for _, g := range gpus {
		index[g.ID] = g.Index
	}
	out := make(map[int64]string, len(gpus))
	for _, g := range gpus {
		parent, ok := index[g.ParentID]
		if !ok {
			parent = -1
		}
		out[g.ID] = UnitName(g, parent)
	}
	return out
}
