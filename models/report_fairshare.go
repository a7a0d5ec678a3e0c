package models

import (
	"math"
	"sort"
	"time"
)

// UsageHalfLife is Slurm's default decay: usage a week old counts half.
const UsageHalfLife = 7 * 24 * time.Hour

// EntitledShares splits the cluster among users. Each team gets a part,
// split equally among its members (a member of two teams gets a part of
// each); users in no team share one more part as if they were a team.
// The parts are equal, unless every team has a weekly GPU-hour quota
// (policy max_gpu_hours_week, in quotas by team ID): then each team's part
// is in proportion to its quota, and the teamless part weighs as much as
// the mean quota. With no teams at all every user gets 1/N. The shares sum to 1.
func EntitledShares(users []User, ms []Membership, quotas map[int64]int64) map[int64]float64 {
	out := make(map[int64]float64, len(users))
	if len(users) == 0 {
		return out
	}
	members := map[int64][]int64{}
	inTeam := map[int64]bool{}
	for _, m := range ms {
		members[m.TeamID] = append(members[m.TeamID], m.UserID)
		inTeam[m.UserID] = true
	}
	var loners []int64
	for _, u := range users {
		if !inTeam[u.ID] {
			loners = append(loners, u.ID)
		}
	}
	weight, lonerWeight, total := teamWeights(members, quotas)
	if len(loners) > 0 {
		total += lonerWeight
	}
	for team, ids := range members {
		for _, id := range ids {
			out[id] += weight[team] / total / float64(len(ids))
		}
	}
	for _, id := range loners {
		out[id] += lonerWeight / total / float64(len(loners))
	}
	return out
}

// teamWeights is each team's weight: its quota when every team has one,
// else 1; the teamless users' weight is the mean.
func teamWeights(members map[int64][]int64, quotas map[int64]int64) (map[int64]float64, float64, float64) {
	useQuotas := len(members) > 0
	for team := range members {
		if quotas[team] <= 0 {
			useQuotas = false
		}
	}
	w := make(map[int64]float64, len(members))
	total := 0.0
	for team := range members {
		w[team] = 1
		if useQuotas {
			w[team] = float64(quotas[team])
		}
		total += w[team]
	}
	mean := 1.0
	if len(members) > 0 {
		mean = total / float64(len(members))
	}
	return w, mean, total
}

// decayWeight is how much usage at age counts: 2^(−age/half-life).
func decayWeight(age time.Duration) float64 {
	return math.Exp2(-float64(age) / float64(UsageHalfLife))
}

// DecayedUsage weighs each span's booked GPU-hours by its age, taken from
// the middle of the span to the end of the report's week. Usage older than
// the spans (four weeks) is left out; it would weigh under 1/11.
func DecayedUsage(spans []Span, figs []Figures, weekEnd time.Time) float64 {
	u := 0.0
	for i, s := range spans {
		if i >= len(figs) || !s.End.After(s.Start) {
			continue
		}
		mid := s.Start.Add(s.End.Sub(s.Start) / 2)
		u += figs[i].BookedHours() * decayWeight(weekEnd.Sub(mid))
	}
	return u
}

// FairShareFactor is Slurm's classic F = 2^(−U/S): U the user's part of
// the cluster's decayed usage, S their entitled share. F = 1 for no use,
// 0.5 when use equals share, towards 0 beyond. No share means F = 0.
func FairShareFactor(u, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return math.Exp2(-u / s)
}

// Rank returns competition ranks (1, 2, 2, 4) of ids by value, highest first.
func Rank(ids []int64, value func(int64) float64) map[int64]int {
	sorted := append([]int64(nil), ids...)
	sort.SliceStable(sorted, func(i, j int) bool {
		vi, vj := value(sorted[i]), value(sorted[j])
		if vi != vj {
			return vi > vj
		}
		return sorted[i] < sorted[j]
	})
	out := make(map[int64]int, len(ids))
	for i, id := range sorted {
		if i > 0 && value(id) == value(sorted[i-1]) {
			out[id] = out[sorted[i-1]]
			continue
		}
		out[id] = i + 1
	}
	return out
}
