package models

import (
	"sort"
	"time"
)

// PolicyBreach is one rule a booking would break: which rule in which
// period, the limit and what the booking would reach (both in the rule's
// base unit), where the limit comes from, and a message to show.
type PolicyBreach struct {
	Rule   string
	Period string
	Limit  int64
	Actual int64
	Source PolicySource
	Msg    Msg
}

// Field is the breach's name in a form or a JSON error: "max_gpus.peak".
func (b PolicyBreach) Field() string { return Key(b.Rule, b.Period) }

// PolicyError is the EPOLICY answer to a booking outside policy: one field
// per broken rule, so that forms and the API list every reason at once.
func PolicyError(bs []PolicyBreach) *Error {
	f := make(map[string]Msg, len(bs))
	for _, b := range bs {
		f[b.Field()] = b.Msg
	}
	return &Error{Code: EPOLICY, Msg: M("err.policy", "Count", len(bs)), Fields: f}
}

// EvaluatePolicy checks a validated booking request against the policy at
// now. It returns nil when the booking may be confirmed at once. The whole
// booking is checked against the all-times limits, each peak and off-peak
// part against the limits of its period, and each quota week it touches
// against that week's allowance (after lending).
func EvaluatePolicy(req NewBooking, in PolicyInput, now time.Time) []PolicyBreach {
	if in.IsAdmin && in.Settings.AdminExempt {
		return nil
	}
	var out []PolicyBreach
	out = append(out, checkModels(in)...)
	if !in.Extending {
		out = append(out, checkTiming(req, in, now)...)
	}
	parts := append([]PeakPart{{Start: req.StartsAt, End: req.EndsAt, Period: PeriodAll}},
		SplitPeak(req.StartsAt, req.EndsAt, in.Settings.Peak, in.loc())...)
	for _, p := range parts {
		out = append(out, checkLength(p, in)...)
		out = append(out, checkHeld(req, p, in)...)
	}
	out = append(out, checkWeeks(req, in)...)
	return worstPerField(out)
}

// NeedsUsage reports whether EvaluatePolicy would look at Held or Loans:
// only the max-GPUs and the weekly GPU-hours rules count what the user
// already holds, so without them the store need not read it.
func (in PolicyInput) NeedsUsage() bool {
	if in.IsAdmin && in.Settings.AdminExempt {
		return false
	}
	for _, rule := range []string{RuleMaxGPUs, RuleMaxGPUHours} {
		spec, _ := SpecOf(rule)
		for _, p := range spec.Periods {
			if _, ok := in.Effective(rule, p); ok {
				return true
			}
		}
	}
	return false
}

// worstPerField keeps one breach per rule and period, the one that exceeds
// its limit most, in the order the rules were checked.
func worstPerField(bs []PolicyBreach) []PolicyBreach {
	idx := map[string]int{}
	var out []PolicyBreach
	for _, b := range bs {
		i, seen := idx[b.Field()]
		switch {
		case !seen:
			idx[b.Field()] = len(out)
			out = append(out, b)
		case b.Actual-b.Limit > out[i].Actual-out[i].Limit:
			out[i] = b
		}
	}
	return out
}

func breach(v PolicyValue, actual int64, key string, kv ...any) PolicyBreach {
	kv = append(kv, "Limit", FormatValue(v.Rule, v.Value), "Actual", FormatValue(v.Rule, actual),
		"Scope", v.Source.Scope, "Source", v.Source.Name, "Period", v.Period)
	return PolicyBreach{Rule: v.Rule, Period: v.Period, Limit: v.Value, Actual: actual, Source: v.Source, Msg: M(key, kv...)}
}

func checkModels(in PolicyInput) []PolicyBreach {
	var out []PolicyBreach
	seen := map[string]bool{}
	for _, m := range in.GPUModels {
		teams := in.ModelTeams[m]
		if seen[m] || len(teams) == 0 || intersects(teams, in.TeamIDs) {
			continue
		}
		seen[m] = true
		v := PolicyValue{Rule: RuleModel, Source: PolicySource{Scope: ScopeGlobal}}
		b := breach(v, 0, "policy.breach.model", "Model", m)
		b.Period = m // one breach per model
		out = append(out, b)
	}
	return out
}

func checkTiming(req NewBooking, in PolicyInput, now time.Time) []PolicyBreach {
	var out []PolicyBreach
	lead := int64(req.StartsAt.Sub(now) / time.Minute)
	if v, ok := in.Effective(RuleMaxAhead, PeriodAll); ok && lead > v.Value {
		out = append(out, breach(v, lead, "policy.breach.max_ahead"))
	}
	if v, ok := in.Effective(RuleMinNotice, PeriodAll); ok && lead < v.Value {
		if lead < 0 {
			lead = 0
		}
		out = append(out, breach(v, lead, "policy.breach.min_notice"))
	}
	return out
}

func checkLength(p PeakPart, in PolicyInput) []PolicyBreach {
	v, ok := in.Effective(RuleMaxLength, p.Period)
	length := int64(p.End.Sub(p.Start) / time.Minute)
	if !ok || length <= v.Value {
		return nil
	}
	return []PolicyBreach{breach(v, length, "policy.breach.max_length")}
}

// checkHeld compares the most GPU-equivalents the user would hold at one
// instant of the part, counting their other bookings, with the period's
// limit: a MIG instance counts as its share, so a limit of 1 GPU allows
// seven 1g slices of an A100 at once and not eight.
func checkHeld(req NewBooking, p PeakPart, in PolicyInput) []PolicyBreach {
	v, ok := in.Effective(RuleMaxGPUs, p.Period)
	if !ok {
		return nil
	}
	held := requestUnits(req, in) + maxConcurrent(in.held(), p.Start, p.End)
	if held <= v.Value*WeightUnits {
		return nil
	}
	b := breach(v, ceilDiv(held, WeightUnits), "policy.breach.max_gpus")
	b.Msg.Data["Actual"] = FormatGPUs(held)
	return []PolicyBreach{b}
}

// requestUnits is what the requested units weigh together, in WeightUnits.
func requestUnits(req NewBooking, in PolicyInput) int64 {
	if len(in.GPUWeights) != len(req.GPUIDs) {
		return int64(len(req.GPUIDs)) * WeightUnits
	}
	var n int64
	for _, w := range in.GPUWeights {
		n += GPU{Weight: w}.Units()
	}
	return n
}

// ceilDiv is a/b rounded up, for a and b > 0: a breach never reads as
// reaching only its limit.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// held is the user's blocking bookings, less the one being re-checked.
func (in PolicyInput) held() []Holding {
	out := make([]Holding, 0, len(in.Held))
	for _, b := range in.Held {
		if b.Blocking() && b.ID != in.ExceptBooking && (in.UserID == 0 || b.UserID == in.UserID) {
			out = append(out, b)
		}
	}
	return out
}

// maxConcurrent is the most GPU-equivalents, in WeightUnits, that bookings
// hold at one instant of [from, to).
func maxConcurrent(bs []Holding, from, to time.Time) int64 {
	type edge struct {
		at    time.Time
		delta int64
	}
	var edges []edge
	for _, b := range bs {
		if !Overlaps(b.StartsAt, b.EndsAt, from, to) {
			continue
		}
		edges = append(edges, edge{b.StartsAt, b.units()}, edge{b.EndsAt, -b.units()})
	}
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta // an end before a start at the same instant
	})
	var cur, best int64
	for _, e := range edges {
		cur += e.delta
		if cur > best {
			best = cur
		}
	}
	return best
}

// checkWeeks compares the GPU-minutes of each quota week the booking
// touches (the user's other bookings plus this one, each weighted: a
// 1g slice of an A100 charges a seventh of a GPU-minute a minute) with the
// weekly limit adjusted by what the user lent, borrowed or drew from a
// pool that week.
func checkWeeks(req NewBooking, in PolicyInput) []PolicyBreach {
	v, ok := in.Effective(RuleMaxGPUHours, PeriodAll)
	if !ok {
		return nil
	}
	var out []PolicyBreach
	units := requestUnits(req, in)
	for ws := WeekStart(req.StartsAt, in.loc()); ws.Before(req.EndsAt); ws = NextWeek(ws) {
		we := NextWeek(ws)
		used := usedUnitMinutes(in.held(), ws, we)
		mine := units * int64(overlap(req.StartsAt, req.EndsAt, ws, we)/time.Minute)
		allow := v
		allow.Value = v.Value + LoanBalance(in.Loans, in.UserID, ws)
		if allow.Value < 0 {
			allow.Value = 0
		}
		if used+mine > allow.Value*WeightUnits {
			out = append(out, breach(allow, ceilDiv(used+mine, WeightUnits), "policy.breach.max_gpu_hours_week", "Week", ws.Format("2006-01-02")))
		}
	}
	return out
}

// UsedGPUMinutes sums the GPU-minutes that holdings hold within [from, to),
// each weighted by what its units weigh, to the nearest GPU-minute.
func UsedGPUMinutes(bs []Holding, from, to time.Time) int64 {
	return (usedUnitMinutes(bs, from, to) + WeightUnits/2) / WeightUnits
}

// usedUnitMinutes is UsedGPUMinutes in WeightUnits, exact.
func usedUnitMinutes(bs []Holding, from, to time.Time) int64 {
	var n int64
	for _, b := range bs {
		if b.Blocking() {
			n += b.units() * int64(overlap(b.StartsAt, b.EndsAt, from, to)/time.Minute)
		}
	}
	return n
}
