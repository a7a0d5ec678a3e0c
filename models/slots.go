package models

import (
	"sort"
	"strings"
	"time"
)

// SlotQuery asks "N GPUs of model M for this long, starting at or after T":
// the find-a-slot form and GET /api/v1/slots, so that nobody has to scan
// the calendar by eye for a gap.
type SlotQuery struct {
	GPUs     int
	Duration time.Duration
	Model    string // "" = any model
	Node     string // "" = any node; else the node's name, any case
	After    time.Time
	// Profile asks for MIG instances of this profile ("1g.10gb") instead
	// of whole GPUs; "" = whole GPUs only: a slice is not a GPU.
	Profile string
}

// Slot is one bookable answer: these GPUs of one node, free for the whole range.
type Slot struct {
	NodeID   int64
	NodeName string
	Model    string
	GPUIDs   []int64
	StartsAt time.Time
	EndsAt   time.Time
}

// MaxSlotOptions is how many options FindSlots offers.
const MaxSlotOptions = 3

// maxSlotGPUs bounds N whatever the limits say: no node has more GPUs.
const maxSlotGPUs = 64

// ValidateSlotQuery checks q against the limits and the GPUs that exist and
// returns it normalised (model trimmed and spelled as the GPUs spell it).
func ValidateSlotQuery(q SlotQuery, gpus []GPU, lim BookingLimits, now time.Time) (SlotQuery, error) {
	fe := FieldErrors{}
	maxN := maxSlotGPUs
	if lim.MaxGPUCount > 0 && lim.MaxGPUCount < maxN {
		maxN = lim.MaxGPUCount
	}
	if q.GPUs < 1 || q.GPUs > maxN {
		fe.Add("gpus", M("err.slot_gpus_invalid", "Max", maxN))
	}
	switch {
	case q.Duration < lim.Slot:
		fe.Add("hours", M("err.too_short", "Minutes", int(lim.Slot/time.Minute)))
	case q.Duration > lim.MaxLength:
		fe.Add("hours", M("err.too_long_booking", "Days", int(lim.MaxLength/(24*time.Hour))))
	}
	if q.Model = strings.TrimSpace(q.Model); q.Model != "" {
		known := false
		for _, g := range gpus {
			if strings.EqualFold(g.Model, q.Model) {
				q.Model, known = g.Model, true
				break
			}
		}
		if !known {
			fe.Add("model", M("err.model_unknown"))
		}
	}
	if q.Node = strings.TrimSpace(q.Node); q.Node != "" {
		known := false
		for _, g := range gpus {
			if strings.EqualFold(g.NodeName, q.Node) {
				q.Node, known = g.NodeName, true
				break
			}
		}
		if !known {
			fe.Add("node", M("err.node_unknown"))
		}
	}
	if q.Profile = strings.TrimSpace(q.Profile); q.Profile != "" {
		known := false
		for _, g := range gpus {
			if g.IsMIGInstance() && strings.EqualFold(g.MIGProfile, q.Profile) {
				q.Profile, known = g.MIGProfile, true
				break
			}
		}
		if !known {
			fe.Add("profile", M("err.profile_unknown"))
		}
	}
	if q.After.After(now.Add(lim.MaxAhead)) {
		fe.Add("after", M("err.start_too_far", "Days", int(lim.MaxAhead/(24*time.Hour))))
	}
	return q, fe.Err()
}

// SlotSearchStart is the earliest start FindSlots considers: the later of
// q.After and now, rounded up to the slot grid. The grid is aligned to the
// Unix epoch, i.e. to whole and half hours in every zone with a whole-hour
// or half-hour offset.
func SlotSearchStart(q SlotQuery, lim BookingLimits, now time.Time) time.Time {
	t := now.UTC()
	if q.After.After(t) {
		t = q.After.UTC()
	}
	return ceilTo(t, lim.Slot)
}

// FindSlots returns up to MaxSlotOptions options for q, earliest first.
//
// An option is a distinct (node, start) pair: N in-service GPUs of one node
// (of model q.Model when given), all free for the whole duration. On each
// node, only the search start and the grid-aligned moments when a busy
// GPU becomes free (and more GPUs are free than at the node's previous
// option) are offered, so that three options are three real alternatives
// rather than one window shifted by a slot. Options with the
// same start are ordered by node name; within an option the GPUs with the
// lowest indices are picked. Starts lie within lim.MaxAhead of now. busy
// holds the blocking bookings that may overlap the search window; q is
// assumed valid (ValidateSlotQuery).
func FindSlots(gpus []GPU, busy []Booking, q SlotQuery, lim BookingLimits, now time.Time) []Slot {
	if q.GPUs < 1 || q.Duration <= 0 || lim.Slot <= 0 {
		return []Slot{}
	}
	from := SlotSearchStart(q, lim, now)
	last := now.UTC().Add(lim.MaxAhead)
	taken := busyByGPU(busy)
	var out []Slot
	for _, node := range slotNodes(gpus, q) {
		out = append(out, nodeSlots(node, taken, q, lim, from, last)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].StartsAt.Equal(out[j].StartsAt) {
			return out[i].StartsAt.Before(out[j].StartsAt)
		}
		return out[i].NodeName < out[j].NodeName
	})
	if len(out) > MaxSlotOptions {
		out = out[:MaxSlotOptions]
	}
	if out == nil {
		out = []Slot{}
	}
	return out
}

type interval struct{ start, end time.Time }

func busyByGPU(busy []Booking) map[int64][]interval {
	m := map[int64][]interval{}
	for _, b := range busy {
		if !b.Blocking() {
			continue
		}
		for _, id := range b.GPUIDs {
			m[id] = append(m[id], interval{b.StartsAt.UTC(), b.EndsAt.UTC()})
		}
	}
	return m
}

// slotNodes groups the eligible GPUs by node, by index, leaving out nodes
// with fewer than q.GPUs of them: never offer fewer GPUs than asked for.
func slotNodes(gpus []GPU, q SlotQuery) [][]GPU {
	byNode := map[int64][]GPU{}
	var order []int64
	for _, g := range gpus {
		if !g.Bookable() || (q.Model != "" && !strings.EqualFold(g.Model, q.Model)) || (q.Node != "" && !strings.EqualFold(g.NodeName, q.Node)) ||
			g.IsMIGInstance() != (q.Profile != "") || !strings.EqualFold(g.MIGProfile, q.Profile) {
			continue
		}
		if _, ok := byNode[g.NodeID]; !ok {
			order = append(order, g.NodeID)
		}
		byNode[g.NodeID] = append(byNode[g.NodeID], g)
	}
	var out [][]GPU
	for _, id := range order {
		ns := byNode[id]
		if len(ns) < q.GPUs {
			continue
		}
		sort.Slice(ns, func(i, j int) bool { return ns[i].Index < ns[j].Index })
		out = append(out, ns)
	}
	return out
}

// nodeSlots returns the node's earliest MaxSlotOptions starts. A start later
// than from can only be the earliest feasible one if some GPU became free
// just before it, so the candidates are from and every busy end on the node
// rounded up to the grid; a candidate is offered only when it frees a GPU
// that the previous option could not use.
func nodeSlots(node []GPU, taken map[int64][]interval, q SlotQuery, lim BookingLimits, from, last time.Time) []Slot {
	cands := []time.Time{from}
	for _, g := range node {
		for _, iv := range taken[g.ID] {
			if t := ceilTo(iv.end, lim.Slot); t.After(from) && !t.After(last) {
				cands = append(cands, t)
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Before(cands[j]) })
	var out []Slot
	var prev map[int64]bool
	for i, t := range cands {
		if (i > 0 && t.Equal(cands[i-1])) || t.After(last) {
			continue
		}
		end := t.Add(q.Duration)
		free := map[int64]bool{}
		var ids []int64
		for _, g := range node {
			if gpuFree(taken[g.ID], t, end) {
				free[g.ID] = true
				if len(ids) < q.GPUs {
					ids = append(ids, g.ID)
				}
			}
		}
		if len(ids) < q.GPUs || subset(free, prev) {
			continue
		}
		prev = free
		out = append(out, Slot{NodeID: node[0].NodeID, NodeName: node[0].NodeName, Model: modelOf(node, ids[0]), GPUIDs: ids, StartsAt: t, EndsAt: end})
		if len(out) == MaxSlotOptions {
			break
		}
	}
	return out
}

// subset reports whether every GPU in a is also in b (b nil: never). A later
// start whose free GPUs were all free at the previous option already is the
// same window shifted, not an alternative.
func subset(a, b map[int64]bool) bool {
	if b == nil {
		return false
	}
	for id := range a {
		if !b[id] {
			return false
		}
	}
	return true
}

func modelOf(node []GPU, id int64) string {
	for _, g := range node {
		if g.ID == id {
			return g.Model
		}
	}
	return ""
}

func gpuFree(busy []interval, start, end time.Time) bool {
	for _, iv := range busy {
		if Overlaps(iv.start, iv.end, start, end) {
			return false
		}
	}
	return true
}

// ceilTo rounds t up to a multiple of step (whole seconds) since the Unix
// epoch. It works in seconds so that far-away times cannot overflow.
func ceilTo(t time.Time, step time.Duration) time.Time {
	t = t.UTC()
	stepS := int64(step / time.Second)
	if stepS <= 0 {
		return t
	}
	secs := t.Unix()
	rem := ((secs % stepS) + stepS) % stepS
	if rem == 0 && t.Nanosecond() == 0 {
		return t
	}
	return time.Unix(secs-rem+stepS, 0).UTC()
}
