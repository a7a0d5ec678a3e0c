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

// BuildLiveStatus assembles the status page from what the store read.
// Nodes come in the order of in.Nodes, GPUs in the order of in.GPUs.
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
	byGPU := map[int64]*GPUStatus{}
	rows := make([]GPUStatus, len(in.GPUs))
	for i, g := range in.GPUs {
		rows[i] = GPUStatus{GPU: g, Latest: latest[g.ID], Spark: spark[g.ID]}
		if rows[i].Spark == nil {
			rows[i].Spark = make([]*float64, SparkMinutes)
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
