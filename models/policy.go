package models

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Policy rules. Each is a limit an admin may set globally, per team or per
// user; values are stored as integers in the rule's base unit (GPUs, or
// minutes, or GPU-minutes) so that no rounding ever decides a booking.
const (
	RuleMaxGPUs     = "max_gpus"           // GPUs held at once
	RuleMaxGPUHours = "max_gpu_hours_week" // GPU-minutes per cluster week
	RuleMaxLength   = "max_length"         // minutes of one booking
	RuleMaxAhead    = "max_ahead"          // minutes between now and the start
	RuleMinNotice   = "min_notice"         // minutes between now and the start
	RuleModel       = "model"              // which teams may book a GPU model
)

// Periods a limit applies to: all times, or only the peak or off-peak parts
// of a booking (a booking that spans both is checked against each part).
const (
	PeriodAll     = ""
	PeriodPeak    = "peak"
	PeriodOffPeak = "offpeak"
)

// Scopes of a limit, least specific first. ScopeDefault is the built-in
// value (the system's booking limits) when no admin set one.
const (
	ScopeDefault = "default"
	ScopeGlobal  = "global"
	ScopeTeam    = "team"
	ScopeUser    = "user"
)

// EPOLICY is the code of a booking refused by policy (HTTP 422): unlike
// EINVALID the request is well formed, and may go in as a priority request.
const EPOLICY = "policy"

// RuleSpec describes a rule for forms and explanations: the periods it can
// be set for and the size of its display unit in base units.
type RuleSpec struct {
	Rule    string
	Periods []string
	Unit    int64 // base units per display unit: 1 for GPUs, 60 for hours, 1440 for days
	UnitKey string
}

// PolicyRules lists the numeric rules in the order pages show them.
var PolicyRules = []RuleSpec{
	{RuleMaxGPUs, []string{PeriodAll, PeriodPeak, PeriodOffPeak}, 1, "policy.unit.gpus"},
	{RuleMaxLength, []string{PeriodAll, PeriodPeak, PeriodOffPeak}, 60, "policy.unit.hours"},
	{RuleMaxGPUHours, []string{PeriodAll}, 60, "policy.unit.gpu_hours"},
	{RuleMaxAhead, []string{PeriodAll}, 1440, "policy.unit.days"},
	{RuleMinNotice, []string{PeriodAll}, 60, "policy.unit.hours"},
}

// SpecOf returns the spec of a numeric rule.
func SpecOf(rule string) (RuleSpec, bool) {
	for _, s := range PolicyRules {
		if s.Rule == rule {
			return s, true
		}
	}
	return RuleSpec{}, false
}

// PolicyLimit is one value an admin set: rule in period for one scope.
type PolicyLimit struct {
	Scope     string
	ScopeID   int64 // team or user id; 0 for global
	Rule      string
	Period    string
	Value     int64
	UpdatedAt time.Time
}

// Key names a rule in a period: "max_gpus.peak"; forms and JSON use it as
// the field name.
func Key(rule, period string) string {
	if period == PeriodAll {
		return rule
	}
	return rule + "." + period
}

// PolicySource says where an effective value comes from, so that nobody
// has to guess why a limit applies to them.
type PolicySource struct {
	Scope   string
	ScopeID int64
	Name    string // the team's or user's name, for display
}

// PolicyValue is the effective value of a rule in a period for one user.
type PolicyValue struct {
	Rule, Period string
	Value        int64
	Source       PolicySource
}

// FormatValue renders v in the rule's display unit with at most two
// decimals and no trailing zeros (FormatHours): 90 minutes of max_length
// is "1.5" (hours), 2161 GPU-minutes "36.02".
func FormatValue(rule string, v int64) string {
	s, ok := SpecOf(rule)
	if !ok || s.Unit == 1 {
		return strconv.FormatInt(v, 10)
	}
	return FormatHours(float64(v) / float64(s.Unit))
}

// ParseValue reads a value typed in the rule's display unit ("1.5" hours);
// "" means "not set here". ok is false for anything else than a number ≥ 0.
func ParseValue(rule, s string) (v int64, set, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, true
	}
	spec, known := SpecOf(rule)
	if known && spec.Unit > 1 {
		if m, isDuration := parseMinutesText(s); isDuration { // "8h", "90 min", "2d"
			if m < 0 || m > 1e7*float64(spec.Unit) {
				return 0, true, false
			}
			return int64(m + 0.5), true, true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if !known || err != nil || !(f >= 0 && f <= 1e7) { // also refuses NaN
		return 0, true, false
	}
	if spec.Unit == 1 && f != float64(int64(f)) {
		return 0, true, false
	}
	return int64(f*float64(spec.Unit) + 0.5), true, true
}

// PolicySettings are the cluster-wide settings of the policy.
type PolicySettings struct {
	Peak        PeakSchedule
	AdminExempt bool // admins skip every limit only when an admin turns this on
}

// DefaultPolicySettings are the settings before an admin changes anything.
func DefaultPolicySettings() PolicySettings {
	return PolicySettings{Peak: DefaultPeakSchedule()}
}

// PolicyInput is everything the evaluator needs about one user, loaded by
// the store inside the booking's transaction.
type PolicyInput struct {
	UserID     int64
	IsAdmin    bool
	TeamIDs    []int64
	TeamNames  map[int64]string
	UserName   string
	Limits     []PolicyLimit // global, the user's teams' and the user's own
	Settings   PolicySettings
	System     BookingLimits      // the hard ceiling; its length and ahead are the defaults
	ModelTeams map[string][]int64 // GPU model → teams allowed to book it; absent = everyone
	GPUModels  []string           // the models of the requested GPUs
	// GPUWeights are the weights of the requested units, in the order of
	// the request's GPU ids (a MIG instance weighs its share of its GPU);
	// none: each weighs one GPU.
	GPUWeights    []float64
	Held          []Holding      // the user's blocking bookings near the request
	Loans         []QuotaLoan    // ledger entries of the weeks the request touches
	Location      *time.Location // the cluster's zone
	ExceptBooking int64          // a booking to leave out of Held (when re-checking it)
	// Extending skips the rules about the start (how far ahead, notice):
	// an extension keeps the start it was booked with.
	Extending bool
}

// Holding is one of the user's bookings as the policy rules see it: when,
// how many GPUs and whether it still blocks. No rule looks at which GPUs,
// so the store reads a count and a weight instead of every booking's GPU rows.
type Holding struct {
	ID       int64
	UserID   int64
	StartsAt time.Time
	EndsAt   time.Time
	Kind     string
	Status   string
	GPUs     int
	// Weight is the GPU-equivalents the booking holds: its units' weights
	// summed, below GPUs when it holds MIG instances; 0 when not read,
	// and each unit then counts as a whole GPU.
	Weight float64
}

// units is what the holding holds in WeightUnits.
func (h Holding) units() int64 {
	if h.Weight > 0 {
		return WeightToUnits(h.Weight)
	}
	return int64(h.GPUs) * WeightUnits
}

// Blocking reports whether the holding still holds its GPUs.
func (h Holding) Blocking() bool { return h.Status == StatusConfirmed }

// HoldingOf is b as the policy rules see it.
func HoldingOf(b Booking) Holding {
	return Holding{ID: b.ID, UserID: b.UserID, StartsAt: b.StartsAt, EndsAt: b.EndsAt, Kind: b.Kind, Status: b.Status, GPUs: len(b.GPUIDs)}
}

// HoldingsOf is HoldingOf for each booking.
func HoldingsOf(bs []Booking) []Holding {
	out := make([]Holding, len(bs))
	for i, b := range bs {
		out[i] = HoldingOf(b)
	}
	return out
}

func (in PolicyInput) loc() *time.Location {
	if in.Location == nil {
		return time.UTC
	}
	return in.Location
}

// Effective returns the value of rule in period for the user: their own,
// else their teams' (the most generous, since belonging to a team grants
// its allowance), else the global one, else the built-in default. ok is
// false when no limit applies.
func (in PolicyInput) Effective(rule, period string) (PolicyValue, bool) {
	pv := PolicyValue{Rule: rule, Period: period}
	var team *PolicyLimit
	var global *PolicyLimit
	for i := range in.Limits {
		l := &in.Limits[i]
		if l.Rule != rule || l.Period != period {
			continue
		}
		switch {
		case l.Scope == ScopeUser && l.ScopeID == in.UserID:
			pv.Value, pv.Source = l.Value, PolicySource{Scope: ScopeUser, ScopeID: l.ScopeID, Name: in.UserName}
			return pv, true
		case l.Scope == ScopeTeam && slices.Contains(in.TeamIDs, l.ScopeID):
			if team == nil || l.Value > team.Value || l.Value == team.Value && l.ScopeID < team.ScopeID {
				team = l
			}
		case l.Scope == ScopeGlobal:
			global = l
		}
	}
	switch {
	case team != nil:
		pv.Value, pv.Source = team.Value, PolicySource{Scope: ScopeTeam, ScopeID: team.ScopeID, Name: in.TeamNames[team.ScopeID]}
	case global != nil:
		pv.Value, pv.Source = global.Value, PolicySource{Scope: ScopeGlobal}
	default:
		v, ok := defaultValue(rule, period, in.System)
		if !ok {
			return pv, false
		}
		pv.Value, pv.Source = v, PolicySource{Scope: ScopeDefault}
	}
	return pv, true
}

// defaultValue keeps today's behaviour when nothing is set: the system's
// maximum length and how far ahead; everything else unlimited.
func defaultValue(rule, period string, sys BookingLimits) (int64, bool) {
	if period != PeriodAll {
		return 0, false
	}
	switch rule {
	case RuleMaxLength:
		return int64(sys.MaxLength / time.Minute), sys.MaxLength > 0
	case RuleMaxAhead:
		return int64(sys.MaxAhead / time.Minute), sys.MaxAhead > 0
	}
	return 0, false
}

// EffectiveAll lists the effective value of every rule and period, in the
// order of PolicyRules, for the limits page and the admin's view of a user.
func (in PolicyInput) EffectiveAll() []PolicyValue {
	var out []PolicyValue
	for _, s := range PolicyRules {
		for _, p := range s.Periods {
			if v, ok := in.Effective(s.Rule, p); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// AllowedModels reports, for each restricted model, whether the user's teams may book it.
func (in PolicyInput) AllowedModels() map[string]bool {
	out := map[string]bool{}
	for m, teams := range in.ModelTeams {
		out[m] = len(teams) == 0 || intersects(teams, in.TeamIDs)
	}
	return out
}

func intersects(a, b []int64) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// SortLimits orders limits for display: scope, scope id, rule order, period.
func SortLimits(ls []PolicyLimit) {
	order := map[string]int{}
	for i, s := range PolicyRules {
		order[s.Rule] = i
	}
	sort.SliceStable(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		if a.ScopeID != b.ScopeID {
			return a.ScopeID < b.ScopeID
		}
		if a.Rule != b.Rule {
			return order[a.Rule] < order[b.Rule]
		}
		return a.Period < b.Period
	})
}
