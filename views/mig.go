package views

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gpubook/gpubook/models"
)

// A MIG instance is a row of gpus of its own (models.GPU.ParentID), with an
// index of 64 and up: the store lists it after every GPU of its node. The
// pages show it directly under its GPU, named by the GPU's index and its
// profile ("GPU 3 · 1g.10gb"), and a GPU with instances as split: it is
// not bookable whole while MIG is on.

// unitOrder returns a node's GPUs with each MIG instance directly under its
// GPU (by GPU instance, then compute instance); an instance whose GPU is
// not in the list keeps its place at the end.
func unitOrder(gpus []models.GPU) []models.GPU {
	return orderUnits(gpus, func(g models.GPU) models.GPU { return g })
}

// orderUnits is unitOrder for rows that carry a GPU (the status page's).
func orderUnits[T any](items []T, gpu func(T) models.GPU) []T {
	children := map[int64][]T{}
	present := map[int64]bool{}
	for _, it := range items {
		if g := gpu(it); !g.IsMIGInstance() {
			present[g.ID] = true
		}
	}
	for _, it := range items {
		if g := gpu(it); g.IsMIGInstance() && present[g.ParentID] {
			children[g.ParentID] = append(children[g.ParentID], it)
		}
	}
	if len(children) == 0 {
		return items
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		g := gpu(it)
		if g.IsMIGInstance() && present[g.ParentID] {
			continue
		}
		out = append(out, it)
		kids := children[g.ID]
		sort.SliceStable(kids, func(i, j int) bool {
			a, b := gpu(kids[i]), gpu(kids[j])
			if a.MIGGI != b.MIGGI {
				return a.MIGGI < b.MIGGI
			}
			return a.MIGCI < b.MIGCI
		})
		out = append(out, kids...)
	}
	return out
}

// migInstances says which GPUs are split into MIG instances
// (models.GPU.IsMIGParent) and into how many in
// service; a split GPU whose instances are all gone counts its slices, so
// that every split GPU has a count above 0. A GPU whose MIG was turned off
// is whole again, even though its old instances keep their rows.
func migInstances(gpus []models.GPU) map[int64]int {
	m := map[int64]int{}
	for _, g := range gpus {
		if g.IsMIGParent() {
			m[g.ID] = 0
		}
	}
	for _, g := range gpus {
		if _, split := m[g.ParentID]; g.IsMIGInstance() && g.InService && split {
			m[g.ParentID]++
		}
	}
	for _, g := range gpus {
		if n, split := m[g.ID]; split && n == 0 {
			m[g.ID] = g.MIGSlices
		}
	}
	return m
}

// gpusByID indexes GPUs, so that an instance finds its GPU.
func gpusByID(gpus []models.GPU) map[int64]models.GPU {
	m := make(map[int64]models.GPU, len(gpus))
	for _, g := range gpus {
		m[g.ID] = g
	}
	return m
}

// UnitName names a bookable unit on its node by models.UnitName: "GPU 3",
// or "GPU 3 · 1g.10gb". byID must hold the instance's GPU; without it the
// instance is "MIG 1g.10gb".
func UnitName(g models.GPU, byID map[int64]models.GPU) string {
	parent, ok := byID[g.ParentID]
	if !ok {
		return models.UnitName(g, -1)
	}
	return models.UnitName(g, parent.Index)
}

// unitNumber is the "#" column of a node's units: "3" for GPU 3, and
// "3 · 1g.10gb" for an instance of it, never its own index (64 and up).
func unitNumber(g models.GPU, nodeGPUs []models.GPU) string {
	if !g.IsMIGInstance() {
		return strconv.Itoa(g.Index)
	}
	return strings.TrimPrefix(UnitName(g, gpusByID(nodeGPUs)), "GPU ")
}

// SliceShare is an instance's share of its GPU, "1/7"; "" for a whole GPU
// or when the GPU's slices are unknown.
func SliceShare(g models.GPU, byID map[int64]models.GPU) string {
	parent, ok := byID[g.ParentID]
	if !g.IsMIGInstance() || !ok || parent.MIGSlices <= 0 || g.MIGSlices <= 0 {
		return ""
	}
	return strconv.Itoa(g.MIGSlices) + "/" + strconv.Itoa(parent.MIGSlices)
}

// MIGProfiles lists the instance profiles present, sorted by slices then
// name ("1g.10gb", "2g.20gb", "3g.40gb"), for the "whole GPU or slice" choices.
func MIGProfiles(gpus []models.GPU) []string {
	slices := map[string]int{}
	for _, g := range gpus {
		if g.IsMIGInstance() && g.MIGProfile != "" {
			slices[g.MIGProfile] = g.MIGSlices
		}
	}
	out := make([]string, 0, len(slices))
	for p := range slices {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if slices[out[i]] != slices[out[j]] {
			return slices[out[i]] < slices[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}
