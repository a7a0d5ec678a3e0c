package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1 "github.com/gpubook/gpubook/models/api"
)

// A GPU in MIG mode is booked through its instances (slices), each a unit
// of its own with a MIG-… UUID; the GPU itself is then not bookable whole
// (the portal lists it with split set). The client names an instance as
// the portal's pages do: by its GPU's index, its profile and its share of
// the GPU, "GPU 3 · 1g.10gb · 1/7".

// anyUnit, as the profile a command asks for, takes every bookable unit:
// whole GPUs and MIG instances of any profile (what free lists).
const anyUnit = "*"

// unitFits reports whether g is a unit of the kind asked: profile "" is
// a whole GPU (never a split one, never an instance), anyUnit either, any
// other an instance of that profile.
func unitFits(g v1.GPU, profile string) bool {
	switch {
	case g.Split:
		return false
	case profile == anyUnit:
		return true
	case profile == "":
		return g.ParentID == nil
	}
	return g.ParentID != nil && strings.EqualFold(g.MIGProfile, profile)
}

// matchProfile finds the MIG profile that --mig names, in any case, among
// the instances the portal lists; it refuses one that no instance has,
// listing those there are, so that nothing is booked on a typo.
func (c *cli) matchProfile(ctx context.Context, api *apiClient, profile string) (string, error) {
	if profile == "" {
		return "", nil
	}
	gpus, err := api.gpus(ctx)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	var all []string
	for _, g := range gpus {
		if g.ParentID == nil || seen[g.MIGProfile] {
			continue
		}
		if strings.EqualFold(g.MIGProfile, profile) {
			return g.MIGProfile, nil
		}
		seen[g.MIGProfile] = true
		all = append(all, show(g.MIGProfile))
	}
	if len(all) == 0 {
		return "", fmt.Errorf("--mig %s: the portal has no MIG instances; book whole GPUs with --gpus", show(profile))
	}
	sort.Strings(all)
	return "", fmt.Errorf("--mig %s matches no MIG instance; the portal has %s", show(profile), strings.Join(all, ", "))
}

// gpusByID indexes the portal's units by id.
func gpusByID(gpus []v1.GPU) map[int64]v1.GPU {
	out := make(map[int64]v1.GPU, len(gpus))
	for _, g := range gpus {
		out[g.ID] = g
	}
	return out
}

// unitName is a unit as people name it: "GPU 3", or for a MIG instance its
// GPU's index, its profile and its share of the GPU, "GPU 3 · 1g.10gb · 1/7".
func unitName(g v1.GPU, byID map[int64]v1.GPU) string {
	if g.ParentID == nil {
		return "GPU " + strconv.Itoa(g.Index)
	}
	parent, ok := byID[*g.ParentID]
	if !ok {
		return fmt.Sprintf("MIG %s · %s", show(g.MIGProfile), showWeight(g.Weight))
	}
	return fmt.Sprintf("GPU %d · %s · %s", parent.Index, show(g.MIGProfile), share(g.MIGSlices, parent.MIGSlices, g.Weight))
}

// share is slices of total as a reduced fraction, "1/7", "1/2"; or the
// weight when the slices are not known.
func share(slices, total int, weight float64) string {
	if slices <= 0 || total <= 0 || slices > total {
		return showWeight(weight)
	}
	a, b := slices, total
	for b != 0 {
		a, b = b, a%b
	}
	if slices == total {
		return "1"
	}
	return fmt.Sprintf("%d/%d", slices/a, total/a)
}

// showWeight is a weight in GPU-equivalents, "0.14".
func showWeight(w float64) string { return strconv.FormatFloat(w, 'f', 2, 64) + " GPU" }

// hasMIG reports whether a booking holds a MIG instance: only then does
// naming its units need the portal's list of GPUs.
func hasMIG(b v1.Booking) bool {
	for _, u := range b.GPUUUIDs {
		if strings.HasPrefix(u, "MIG-") {
			return true
		}
	}
	return false
}

// unitsWords names what a booking holds: "2 GPUs", or its MIG instances
// by GPU and profile, "GPU 3 · 1g.10gb · 1/7" or "2 × GPU 3 · 1g.10gb · 1/7".
// byID may be nil when the booking holds no instance.
func unitsWords(ids []int64, byID map[int64]v1.GPU) string {
	whole := 0
	count := map[string]int{}
	var names []string
	for _, id := range ids {
		g, ok := byID[id]
		if !ok || g.ParentID == nil {
			whole++
			continue
		}
		n := unitName(g, byID)
		if count[n] == 0 {
			names = append(names, n)
		}
		count[n]++
	}
	var parts []string
	if whole > 0 || len(names) == 0 {
		parts = append(parts, gpuCount(whole))
	}
	for _, n := range names {
		if count[n] > 1 {
			n = strconv.Itoa(count[n]) + " × " + n
		}
		parts = append(parts, n)
	}
	return strings.Join(parts, ", ")
}

// bookingUnits maps the units of bookings that hold MIG instances, with
// their GPUs, reading the portal's list only when one does.
func bookingUnits(ctx context.Context, api *apiClient, bs ...v1.Booking) (map[int64]v1.GPU, error) {
	for _, b := range bs {
		if hasMIG(b) {
			gpus, err := api.gpus(ctx)
			if err != nil {
				return nil, err
			}
			return gpusByID(gpus), nil
		}
	}
	return nil, nil
}
