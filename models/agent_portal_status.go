package models

import (
	"sort"
	"time"
)

// IdlePolicy is the cluster's answer to idle bookings. The agent reports a
// booking idle after its own threshold (30 min by default); the portal then
// warns the owner and, with AutoRelease, releases the rest of the booking
// once the GPUs stayed idle for Grace longer.
type IdlePolicy struct {
	AutoRelease bool
	Grace       time.Duration
	UtilPct     float64 // a minute whose peak is below this, with no user, is idle
}

// DefaultIdlePolicy warns only; an admin opts into auto-release.
var DefaultIdlePolicy = IdlePolicy{AutoRelease: false, Grace: 30 * time.Minute, UtilPct: 5}

// AutoReleaseActor is who releases an idle booking in the audit log.
var AutoReleaseActor = &User{Email: "gpubook-auto-release", Name: "auto-release", IsAdmin: true}

// IdleMinuteOf says whether one stored minute of a GPU counts as idle:
// peak utilisation under the threshold (unknown on MIG GPUs) and no user.
func IdleMinuteOf(u UsageMinute, users int, pol IdlePolicy) bool {
	if users > 0 {
		return false
	}
	return u.UtilMaxPct == nil || *u.UtilMaxPct < pol.UtilPct
}

// IdleReleaseDue decides whether the rest of rep's booking is released at
// now: auto-release is on, the booking still runs and was not released, and
// every minute of every reported GPU over the grace period after the report
// is stored and idle. A missing minute counts as not idle: without evidence
// the portal never takes GPUs away. idle maps GPU ID → minute → idle.
func IdleReleaseDue(pol IdlePolicy, rep IdleReport, idle map[int64]map[time.Time]bool, now time.Time) bool {
	if !pol.AutoRelease || rep.ReleasedAt != nil || len(rep.GPUIDs) == 0 || !now.Before(rep.BookingEndsAt) {
		return false
	}
	start := rep.ReportedAt.UTC().Truncate(time.Minute)
	end := start.Add(pol.Grace)
	if now.Before(end) {
		return false
	}
	for _, g := range rep.GPUIDs {
		for m := start; m.Before(end); m = m.Add(time.Minute) {
			if !idle[g][m] {
				return false
			}
		}
	}
	return true
}

// SparkMinutes is the sparkline's length: the last hour.
const SparkMinutes = 60

// GPUStatus is one row of the live status page.
type GPUStatus struct {
	GPU        GPU
	Booking    *Booking     // who booked it now, if anyone
	Users      []UserMinute // who used it in the latest minute
	Latest     *UsageMinute // the latest minute of the last hour
	Spark      []*float64   // utilisation per minute, oldest first; nil = no data
	Violations []Violation  // seen within ViolationRecent
	Idle       *IdleReport  // an open idle report of the booking
	Unbooked   bool         // used in the latest minute with no booking
}

// NodeStatus is one node on the live status page.
type NodeStatus struct {
	Agent   AgentNode
	Offline bool
	// Stale: the GPUs' latest figures may no longer hold (AgentNode.FiguresStale).
	Stale bool
	GPUs  []GPUStatus
}

// LiveScope is whose minutes the status page reads: every GPU's (All), or
// only those of the nodes open on a collapsed page. Reading the last hour
// of every GPU of a 50,000-GPU lab is 3 million rows for each view; a
// collapsed node shows only what the bookings, violations and idle
// reports say. A large lab's page shows some of its nodes (Page), and
// reads the bookings and minutes of those only.
type LiveScope struct {
	All   bool
	Nodes []int64
	// Page, when not nil, is the nodes the page shows; nil: every node.
	Page []int64
}

// PageGPUs is the GPUs of the page's nodes among gpus, in their order, in
// a new slice (gpus may be the store's shared one); gpus itself when the
// scope is every node.
func (s LiveScope) PageGPUs(gpus []GPU) []GPU {
	if s.Page == nil {
		return gpus
	}
	page := make(map[int64]bool, len(s.Page))
	for _, id := range s.Page {
		page[id] = true
	}
	var out []GPU
	for _, g := range gpus {
		if page[g.NodeID] {
			out = append(out, g)
		}
	}
	return out
}

// GPUIDs is the IDs of the GPUs in scope among gpus; nil when the scope is
// every GPU of the lab, empty (not nil) when nothing is open.
func (s LiveScope) GPUIDs(gpus []GPU) []int64 {
	if s.All && s.Page == nil {
		return nil
	}
	open := make(map[int64]bool, len(s.Nodes))
	for _, id := range s.Nodes {
		open[id] = true
	}
	ids := []int64{}
	for _, g := range s.PageGPUs(gpus) {
		if s.All || open[g.NodeID] {
			ids = append(ids, g.ID)
		}
	}
	return ids
}

// NodeSummary is a collapsed node's row on the status page: its bookable
// units (a GPU split into MIG slices counts by its slices, not itself)
// and what is flagged on it now.
type NodeSummary struct {
	Units, Booked, Free, Out int
	// Flagged counts the rows with a recent violation or use without a
	// booking; Idle the units whose booking was reported idle.
	Flagged, Idle int
	// Holders are the names of the people whose bookings run on the node
	// now, each once, in alphabetical order.
	Holders []string
}

// SummarizeNode counts n's units from its GPUStatus rows. A booked unit
// out of service counts as booked and out; free is in service and not
// booked.
func SummarizeNode(n NodeStatus) NodeSummary {
	var s NodeSummary
	seen := map[string]bool{}
	for _, g := range n.GPUs {
		if len(g.Violations) > 0 || g.Unbooked {
			s.Flagged++ // a split GPU's own row too: a violation is never hidden
		}
		if g.GPU.IsMIGParent() {
			continue
		}
		s.Units++
		switch {
		case g.Booking != nil:
			s.Booked++
			if name := g.Booking.UserName; !seen[name] {
				seen[name] = true
				s.Holders = append(s.Holders, name)
			}
		case g.GPU.InService:
			s.Free++
		}
		if !g.GPU.InService {
			s.Out++
		}
		if g.Idle != nil {
			s.Idle++
		}
	}
	sort.Strings(s.Holders)
	return s
}

// BuildLiveStatus assembles the status page from what the store read.
// Nodes come in the order of in.Nodes, GPUs in the order of in.GPUs. The
// GPUs without a minute of the last hour (all those out of scope) share
// one empty sparkline: read it, never write into it.
func BuildLiveStatus(in LiveInputs, now time.Time) []NodeStatus {
	first := now.UTC().Truncate(time.Minute).Add(-SparkMinutes * time.Minute)
	latest := map[int64]*UsageMinute{}
	spark := map[int64][]*float64{}
	for i := range in.Usage {
		u := &in.Usage[i]
		slot := int(u.Minute.Sub(first) / time.Minute)
		if slot < 0 || slot >= SparkMinutes {
			continue
		}
		if spark[u.GPUID] == nil {
			spark[u.GPUID] = make([]*float64, SparkMinutes)
		}
		spark[u.GPUID][slot] = u.UtilAvgPct
		if l := latest[u.GPUID]; l == nil || u.Minute.After(l.Minute) {
			latest[u.GPUID] = u
		}
	}
	byGPU := make(map[int64]*GPUStatus, len(in.GPUs))
	rows := make([]GPUStatus, len(in.GPUs))
	empty := make([]*float64, SparkMinutes)
	for i, g := range in.GPUs {
		rows[i] = GPUStatus{GPU: g, Latest: latest[g.ID], Spark: spark[g.ID]}
		if rows[i].Spark == nil {
			rows[i].Spark = empty
		}
		byGPU[g.ID] = &rows[i]
	}
	attachActivity(in, byGPU)
	return groupByNode(in.Nodes, rows, now)
}

// attachActivity adds bookings, users, violations and idle reports to rows.
func attachActivity(in LiveInputs, byGPU map[int64]*GPUStatus) {
	for i := range in.Bookings {
		for _, id := range in.Bookings[i].GPUIDs {
			if r := byGPU[id]; r != nil {
				r.Booking = &in.Bookings[i]
			}
		}
	}
	for _, u := range in.Users {
		if r := byGPU[u.GPUID]; r != nil && r.Latest != nil && u.Minute.Equal(r.Latest.Minute) {
			r.Users = append(r.Users, u)
		}
	}
	for _, v := range in.Violations {
		if r := byGPU[v.GPUID]; r != nil {
			r.Violations = append(r.Violations, v)
		}
	}
	for i := range in.Idle {
		for _, id := range in.Idle[i].GPUIDs {
			if r := byGPU[id]; r != nil && r.Booking != nil && r.Booking.ID == in.Idle[i].BookingID {
				r.Idle = &in.Idle[i]
			}
		}
	}
	for _, r := range byGPU {
		sort.Slice(r.Users, func(i, j int) bool { return r.Users[i].UserName < r.Users[j].UserName })
		r.Unbooked = r.Booking == nil && len(r.Users) > 0
	}
}

func groupByNode(nodes []AgentNode, rows []GPUStatus, now time.Time) []NodeStatus {
	out := make([]NodeStatus, len(nodes))
	at := map[int64]int{}
	for i, n := range nodes {
		out[i] = NodeStatus{Agent: n, Offline: n.Offline(now), Stale: n.FiguresStale(now)}
		at[n.NodeID] = i
	}
	for _, r := range rows {
		if i, ok := at[r.GPU.NodeID]; ok {
			out[i].GPUs = append(out[i].GPUs, r)
		}
	}
	return out
}
