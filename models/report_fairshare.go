package models

import (
	"math"
	"sort"
	"time"
)

// UsageHalfLife is Slurm's default decay: usage a week old counts half.
const UsageHalfLife = 7 * 24 * time.Hour

// DefaultTeamWeight is a team's share weight until an admin sets another,
// and the weight of the one part the users in no team share.
const DefaultTeamWeight = 1.0

// EntitledShares splits the cluster among users. Each team gets a part in
// proportion to its weight (weights, by team ID; DefaultTeamWeight where
// unset), split equally among its active members (active: any booked or
// unbooked use in the report's four weeks), or among all its members when
// none was active. A member of two teams gets a part of each. The users in
// no team share one more part of DefaultTeamWeight, split the same way:
// a lone teamless user does not get a whole team's part unless the teams
// are as many as one. The shares sum to 1 over the teams and parts that
// have members.
func EntitledShares(users []User, ms []Membership, weights map[int64]float64, active map[int64]bool) map[int64]float64 {
	out := make(map[int64]float64, len(users))
	if len(users) == 0 {
		return out
	}
	groups := map[int64][]int64{} // team ID → members; 0 is the teamless part
	inTeam := map[int64]bool{}
	for _, m := range ms {
		groups[m.TeamID] = append(groups[m.TeamID], m.UserID)
		inTeam[m.UserID] = true
	}
	for _, u := range users {
		if !inTeam[u.ID] {
			groups[0] = append(groups[0], u.ID)
		}
	}
	weight := func(team int64) float64 {
		if w, ok := weights[team]; ok && team != 0 && w > 0 {
			return w
		}
		return DefaultTeamWeight
	}
	total := 0.0
	for team := range groups {
		total += weight(team)
	}
	for team, ids := range groups {
		sharers := activeOnly(ids, active)
		for _, id := range sharers {
			out[id] += weight(team) / total / float64(len(sharers))
		}
	}
	return out
}

// activeOnly keeps the active ids, or all of them when none is active.
func activeOnly(ids []int64, active map[int64]bool) []int64 {
	var out []int64
	for _, id := range ids {
		if active[id] {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return ids
	}
	return out
}

// decayWeight is how much usage at age counts: 2^(−age/half-life).
func decayWeight(age time.Duration) float64 {
	return math.Exp2(-float64(age) / float64(UsageHalfLife))
}

// DecayedUsage weighs each span's charged GPU-hours (Figures.ChargedHours
// under rules r) by its age, taken from the middle of the span to the end
// of the report's week. Usage older than the spans (four weeks) is left
// out; it would weigh under 1/11.
func DecayedUsage(spans []Span, figs []Figures, weekEnd time.Time, r ReportRules) float64 {
	u := 0.0
	for i, s := range spans {
		if i >= len(figs) || !s.End.After(s.Start) {
			continue
		}
		mid := s.Start.Add(s.End.Sub(s.Start) / 2)
		u += figs[i].ChargedHours(r) * decayWeight(weekEnd.Sub(mid))
	}
	return u
}

// FairShareFactor is Slurm's classic F = 2^(−U/S): U the user's part of
// the cluster's decayed usage, S their entitled share. F = 1 for no use,
// 0.5 when use equals share, towards 0 beyond. No use means F = 1 even
// without a share (an inactive member whose team's part went to its active
// members); use without a share means F = 0.
func FairShareFactor(u, s float64) float64 {
	if u <= 0 {
		return 1
	}
	if s <= 0 {
		return 0
	}
	return math.Exp2(-u / s)
}

// Rank returns competition ranks (1, 2, 2, 4) of ids by value, highest first.
func Rank(ids []int64, value func(int64) float64) map[int64]int {
	sorted := append([]int64(nil), ids...)
	values := make(map[int64]float64, len(ids)) // each once, not per comparison
	for _, id := range ids {
		values[id] = value(id)
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		vi, vj := values[sorted[i]], values[sorted[j]]
		if vi != vj {
			return vi > vj
		}
		return sorted[i] < sorted[j]
	})
	out := make(map[int64]int, len(ids))
	for i, id := range sorted {
		if i > 0 && values[id] == values[sorted[i-1]] {
			out[id] = out[sorted[i-1]]
			continue
		}
		out[id] = i + 1
	}
	return out
}
