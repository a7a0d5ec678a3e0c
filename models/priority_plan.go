package models

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The ways a standard booking gives way to an approved request, from the
// least damage to the most: a move costs its owner nothing, a split only
// the overlap, a cancel the whole booking.
const (
	GiveWayMove   = "move"
	GiveWaySplit  = "split"
	GiveWayCancel = "cancel"
)

// GPUMove is one GPU of a moved booking and the GPU it moves to, with
// their indexes on the node and their names (UnitName) for people.
type GPUMove struct {
	From, To           int64
	FromIndex, ToIndex int
	FromName, ToName   string
}

// Preemption is what approving a pre-empting request does to one booking
// in its way, and what its owner loses by it.
type Preemption struct {
	Booking Booking
	Action  string
	Moves   []GPUMove // move: the GPUs swapped; the others stay
	GPUIDs  []int64   // the booking's GPUs afterwards (its first part's), sorted
	Keep    []Part    // move, split: the parts that stay, in time order; the first keeps the booking's id
	// Taken are the booking's GPUs that the request takes over its
	// window, sorted: a split takes only these, the others stay.
	Taken []int64
	// LostGPUSeconds is the booked GPU time taken from the owner.
	LostGPUSeconds int64
	OwnTeam        bool // the owner is in the requester's team
	// Whole: the owner's team keeps multi-GPU bookings all or nothing, so
	// this one gave up all its GPUs where the request needed only some;
	// the preview names it as the reason the loss exceeds the request.
	Whole bool
	// Filled by the store, for display.
	OwnerTeams string
}

// Part is one piece of a booking that gives way: a span and the GPUs it
// holds over it. A split booking stays a set of whole bookings, each on
// one set of GPUs for one span, so that the calendar, the feeds, the API
// and the node agents, which all read bookings, show what the owner holds
// without knowing of pre-emption.
type Part struct {
	Span
	GPUIDs []int64
}

// LostGPUHours is the loss in GPU-hours, for people.
func (p Preemption) LostGPUHours() string { return FormatGPUHours(p.LostGPUSeconds) }

// FormatGPUHours writes GPU-seconds as GPU-hours rounded to a tenth
// ("2.5", "3"), so that nobody reads 47.416666666666664.
func FormatGPUHours(seconds int64) string {
	h := math.Round(float64(seconds)/360) / 10
	return strconv.FormatFloat(h, 'f', -1, 64)
}

// PreemptInput is what the planner weighs: the request, the bookings in
// its way, the node's GPUs and every blocking booking on them that could
// stand in the way of a move.
type PreemptInput struct {
	Request PriorityRequest
	InWay   []Booking // blocking bookings on the request's GPUs that overlap it
	Busy    []Booking // blocking bookings on the node (may include InWay)
	GPUs    []GPU     // the node's GPUs
	Team    []int64   // the users of the requester's team
	// Whole are the users whose multi-GPU bookings are all or nothing (a
	// team of theirs says a job cannot run on fewer GPUs than it booked).
	Whole []int64
	Now   time.Time
}

// PlanPreemption chooses, for each booking in the way, the way of giving
// way that loses the fewest GPU-hours: a booking that has not started moves
// to free GPUs of the same model when there are some; otherwise it is split
// around the request (a running booking keeps its start); what would keep
// nothing is cancelled. Free GPUs go first to other teams' bookings, then
// to those that would lose the most, so that the requester's own team and
// the smallest losses bear what cannot be avoided. Priority bookings are
// never touched: one in the way refuses the plan.
func PlanPreemption(in PreemptInput) ([]Preemption, error) {
	r := in.Request
	out := make([]Preemption, 0, len(in.InWay))
	for _, b := range in.InWay {
		if b.Kind == KindPriority {
			return nil, NewError(ECONFLICT, M("request.err.priority_in_way", "ID", b.ID, "Name", b.UserName))
		}
		p := splitPlan(b, r.GPUIDs, r.StartsAt, r.EndsAt, slices.Contains(in.Whole, b.UserID))
		p.OwnTeam = slices.Contains(in.Team, b.UserID)
		out = append(out, p)
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := out[a], out[b]
		if pa.Whole != pb.Whole { // a free GPU first spares an all-or-nothing booking its excess loss
			return boolRank(pb.Whole) - boolRank(pa.Whole)
		}
		if pa.OwnTeam != pb.OwnTeam {
			return boolRank(pa.OwnTeam) - boolRank(pb.OwnTeam)
		}
		return cmp.Or(cmp.Compare(pb.LostGPUSeconds, pa.LostGPUSeconds), cmp.Compare(pa.Booking.ID, pb.Booking.ID))
	})
	claims := slices.Clone(in.Busy)
	for _, i := range order {
		b := out[i].Booking
		if !b.StartsAt.After(in.Now) {
			continue // running: its start never moves
		}
		if moves, ok := findMove(b, r.GPUIDs, in.GPUs, claims); ok {
			p := Preemption{Booking: b, Action: GiveWayMove, Moves: moves, GPUIDs: movedGPUs(b.GPUIDs, moves), OwnTeam: out[i].OwnTeam}
			p.Keep = []Part{{Span: Span{Start: b.StartsAt, End: b.EndsAt}, GPUIDs: p.GPUIDs}}
			out[i] = p
			claims = append(claims, Booking{ID: -b.ID, GPUIDs: p.GPUIDs, StartsAt: b.StartsAt, EndsAt: b.EndsAt})
		}
	}
	slices.SortFunc(out, func(a, b Preemption) int { return cmp.Compare(a.Booking.ID, b.Booking.ID) })
	return out, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// splitPlan takes from b what the request needs and no more: the GPUs
// of b that the request asks for (taken), over the time both share. The
// owner keeps b's other GPUs through that window and all of b outside it,
// as up to three parts: before the window on all GPUs, the window on the
// GPUs not taken, after the window on all GPUs. The loss is the window
// times the GPUs taken, which can never exceed the request's own GPU-time
// because bookings never overlap on a GPU. Nothing kept means a cancel.
// An all-or-nothing booking (whole) that the request needs only some GPUs
// of gives up all of them over the window instead, marked Whole.
func splitPlan(b Booking, need []int64, start, end time.Time, whole bool) Preemption {
	var taken, rest []int64
	for _, g := range b.GPUIDs {
		if slices.Contains(need, g) {
			taken = append(taken, g)
		} else {
			rest = append(rest, g)
		}
	}
	all := slices.Sorted(slices.Values(b.GPUIDs))
	whole = whole && len(rest) > 0
	if whole {
		taken, rest = all, nil
	}
	slices.Sort(taken)
	from, to := start, end
	if b.StartsAt.After(from) {
		from = b.StartsAt
	}
	if b.EndsAt.Before(to) {
		to = b.EndsAt
	}
	p := Preemption{Booking: b, Action: GiveWaySplit, Taken: taken, Whole: whole}
	add := func(s, e time.Time, gpus []int64) {
		if s.Before(e) && len(gpus) > 0 {
			p.Keep = append(p.Keep, Part{Span: Span{Start: s, End: e}, GPUIDs: slices.Sorted(slices.Values(gpus))})
		}
	}
	add(b.StartsAt, from, all)
	add(from, to, rest)
	add(to, b.EndsAt, all)
	p.GPUIDs = all
	if len(p.Keep) == 0 {
		p.Action = GiveWayCancel
	} else {
		p.GPUIDs = p.Keep[0].GPUIDs
	}
	if from.Before(to) {
		p.LostGPUSeconds = int64(to.Sub(from)/time.Second) * int64(len(taken))
	}
	return p
}

// findMove finds, for each of b's GPUs that the request needs, another GPU
// of the same model on the node, in service, outside the request and free
// over b's whole span; the lowest index first.
func findMove(b Booking, need []int64, gpus []GPU, claims []Booking) ([]GPUMove, bool) {
	byID := map[int64]GPU{}
	for _, g := range gpus {
		byID[g.ID] = g
	}
	names := UnitNames(gpus)
	sorted := slices.Clone(gpus)
	slices.SortFunc(sorted, func(x, y GPU) int { return cmp.Compare(x.Index, y.Index) })
	taken := map[int64]bool{}
	var moves []GPUMove
	for _, from := range b.GPUIDs {
		if !slices.Contains(need, from) {
			continue
		}
		to, ok := freeGPU(b, byID[from], need, sorted, claims, taken)
		if !ok {
			return nil, false
		}
		taken[to] = true
		moves = append(moves, GPUMove{From: from, To: to, FromIndex: byID[from].Index, ToIndex: byID[to].Index,
			FromName: names[from], ToName: names[to]})
	}
	return moves, len(moves) > 0
}

// freeGPU finds a unit like from (SameUnit: a whole GPU of its model, or
// an instance of its profile), bookable, free over b and not yet taken.
func freeGPU(b Booking, from GPU, need []int64, gpus []GPU, claims []Booking, taken map[int64]bool) (int64, bool) {
	for _, g := range gpus {
		if !from.SameUnit(g) || !g.Bookable() || slices.Contains(need, g.ID) || slices.Contains(b.GPUIDs, g.ID) || taken[g.ID] {
			continue
		}
		if !busy(g.ID, b, claims) {
			return g.ID, true
		}
	}
	return 0, false
}

func busy(gpu int64, b Booking, claims []Booking) bool {
	for _, c := range claims {
		if c.ID != b.ID && slices.Contains(c.GPUIDs, gpu) && Overlaps(c.StartsAt, c.EndsAt, b.StartsAt, b.EndsAt) {
			return true
		}
	}
	return false
}

func movedGPUs(ids []int64, moves []GPUMove) []int64 {
	out := slices.Clone(ids)
	for _, m := range moves {
		if i := slices.Index(out, m.From); i >= 0 {
			out[i] = m.To
		}
	}
	slices.Sort(out)
	return out
}

// AnyPlan, given as the plan fingerprint of an approval, accepts whatever
// plan the approval computes: for callers that showed no preview (the
// command line, tests). A web form always carries the fingerprint it showed.
const AnyPlan = "*"

// LostGPUSeconds is what a whole plan takes, in GPU-seconds.
func LostGPUSeconds(plan []Preemption) int64 {
	var n int64
	for _, p := range plan {
		n += p.LostGPUSeconds
	}
	return n
}

// PlanFingerprint names a plan for request id: the approval form carries
// the fingerprint of the plan it showed, and the decision refuses to apply
// another. It covers each booking as it was and what happens to it.
func PlanFingerprint(id int64, plan []Preemption) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "request %d\n", id)
	for _, p := range plan {
		b := p.Booking
		fmt.Fprintf(&sb, "%d %d %v %d %d %s %v %v %v", b.ID, b.UserID, b.GPUIDs, b.StartsAt.Unix(), b.EndsAt.Unix(), p.Action, p.GPUIDs, p.Taken, p.Whole)
		for _, s := range p.Keep {
			fmt.Fprintf(&sb, " %d-%d%v", s.Start.Unix(), s.End.Unix(), s.GPUIDs)
		}
		sb.WriteByte('\n')
	}
	sum := sha256.Sum256([]byte(sb.String()))
	return hex.EncodeToString(sum[:12])
}
