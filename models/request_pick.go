package models

import (
	"slices"
	"strings"
)

// GPUsToRequest chooses the GPUs a priority request asks for when a
// booking found no room: count bookable whole GPUs (never a MIG instance,
// nor a GPU split into them) of model ("" = any, any
// case) on one node — nodeID, or else the first node that has enough —
// those in prefer first (the free ones), then by index. gpus come in node
// then index order. It answers the node and the GPUs, or 0 and nil when
// no node has count such GPUs.
func GPUsToRequest(gpus []GPU, nodeID int64, model string, count int, prefer []int64) (int64, []int64) {
	if count <= 0 {
		return 0, nil
	}
	fits := func(g GPU) bool {
		return g.Bookable() && !g.IsMIGInstance() && (model == "" || strings.EqualFold(g.Model, model)) && (nodeID == 0 || g.NodeID == nodeID)
	}
	byNode := map[int64][]int64{}
	var order []int64
	for _, g := range gpus {
		if !fits(g) {
			continue
		}
		if _, seen := byNode[g.NodeID]; !seen {
			order = append(order, g.NodeID)
		}
		byNode[g.NodeID] = append(byNode[g.NodeID], g.ID)
	}
	for _, n := range order {
		ids := byNode[n]
		if len(ids) < count {
			continue
		}
		first := make([]int64, 0, len(ids))
		for _, id := range ids {
			if slices.Contains(prefer, id) {
				first = append(first, id)
			}
		}
		for _, id := range ids {
			if !slices.Contains(prefer, id) {
				first = append(first, id)
			}
		}
		out := first[:count]
		slices.Sort(out)
		return n, out
	}
	return 0, nil
}

// RequireInService refuses (ECONFLICT) a request whose GPUs are not all in
// service and whole (not split into MIG instances since), naming the first
// one out and why: approving it would confirm a booking on a GPU that
// the booking form and the API refuse. gpus may hold other GPUs too.
func RequireInService(gpus []GPU, ids []int64) error {
	for _, g := range gpus {
		if !slices.Contains(ids, g.ID) {
			continue
		}
		if !g.InService {
			return NewError(ECONFLICT, M("request.err.out_of_service", "GPU", UnitNames(gpus)[g.ID], "Reason", g.OutOfServiceReason))
		}
		if g.IsMIGParent() { // split into MIG instances while the request waited
			return NewError(ECONFLICT, M("err.gpu_mig_parent", "ID", g.ID))
		}
	}
	return nil
}
