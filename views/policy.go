package views

import (
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
)

// SourceLabel names where an effective value comes from, for people.
func (p *Page) SourceLabel(s models.PolicySource) string {
	switch s.Scope {
	case models.ScopeUser:
		if p.User == nil || p.User.ID != s.ScopeID {
			return p.Tr("policy.scope_user", "Name", s.Name) // an admin looking at someone
		}
		return p.Tr("policy.source.user", "Name", s.Name)
	case models.ScopeTeam:
		return p.Tr("policy.source.team", "Name", s.Name)
	case models.ScopeGlobal:
		return p.Tr("policy.source.global")
	}
	return p.Tr("policy.source.default")
}

// RuleLabel names a rule in a period: "GPUs held at once · peak hours".
func (p *Page) RuleLabel(rule, period string) string {
	s := p.Tr("policy.rule." + rule)
	if period != models.PeriodAll {
		s += " · " + p.Tr("policy.period."+period)
	}
	return s
}

// ValueLabel shows a value in its rule's unit: "4 h", "2 GPUs".
func (p *Page) ValueLabel(rule string, v int64) string {
	spec, _ := models.SpecOf(rule)
	n := models.FormatValue(rule, v)
	return n + " " + p.Tr(spec.UnitKey, "Count", n) // "1 GPU", "2 GPUs"
}

// PeakLabel describes a peak schedule: "Mon–Fri 09:00–19:00" or "off".
func (p *Page) PeakLabel(s models.PeakSchedule) string {
	if !s.Enabled {
		return p.Tr("policy.peak_off")
	}
	var days []string
	for _, d := range weekOrder {
		if s.Days[d] {
			days = append(days, p.Tr("policy.day."+itoa(int(d))))
		}
	}
	return p.List(days) + " " + models.ClockText(s.From) + "–" + models.ClockText(s.To)
}

// PeakLocal describes this quota week's peak hours (the week starting at
// ws) on the viewer's clock: "Sun, Mon, Tue 20:00–06:00 (next day)".
func (p *Page) PeakLocal(s models.PeakSchedule, ws time.Time) string {
	if !s.Enabled {
		return p.Tr("policy.peak_off")
	}
	var parts []string
	for _, sp := range models.PeakSpansIn(s, ws, p.Location) {
		days := make([]string, len(sp.Days))
		for i, d := range sp.Days {
			days[i] = p.Tr("policy.day." + itoa(int(d)))
		}
		part := p.List(days) + " " + models.ClockText(sp.From) + "–" + models.ClockText(sp.To)
		if sp.NextDay() {
			part += p.Tr("policy.next_day")
		}
		parts = append(parts, part)
	}
	if p.T.Lang == "zh-CN" {
		return strings.Join(parts, "；")
	}
	return strings.Join(parts, "; ")
}

// weekOrder lists weekdays from Monday, as the quota week runs.
var weekOrder = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

// GPUHours shows GPU-minutes as GPU-hours.
func GPUHours(min int64) string { return models.FormatValue(models.RuleMaxGPUHours, min) }

// PolicyCheckView is the live verdict of the booking form.
type PolicyCheckView struct {
	Checked  bool // false: nothing to judge yet (missing fields)
	Breaches []models.PolicyBreach
	Problems []string // validation problems, translated
	Request  string   // the query that opens the priority request form with the same values
}

// RequestLink builds the query of the priority request form from the booking form's values.
func RequestLink(f BookingForm) string {
	q := url.Values{}
	for _, id := range f.GPUIDs {
		q.Add("gpu", itoa64(id))
	}
	q.Set("starts_at", f.Start)
	q.Set("ends_at", f.End)
	q.Set("duration", f.Duration)
	q.Set("note", f.Note)
	if f.NodeID > 0 {
		q.Set("node", itoa64(f.NodeID))
	}
	return "/requests/new?" + q.Encode()
}

// LimitsView is the "my limits" page.
type LimitsView struct {
	AtInput   string
	At        time.Time
	AtPeak    bool
	Zone      string // the cluster's zone, in which peak hours and weeks run
	OwnZone   bool   // the viewer's zone reads times differently: show both
	Values    []models.PolicyValue
	Settings  models.PolicySettings
	Exempt    bool          // an admin while the exemption is on
	Models    []ModelAccess // the restricted GPU models, by name
	WeekStart time.Time
	Weekly    *models.PolicyValue // nil: no weekly limit
	Used      int64               // GPU-minutes this week
	Balance   int64               // what loans add or take this week
	Lend      LendView
}

// AppliesAt reports whether a value applies at the chosen time.
func (v LimitsView) AppliesAt(pv models.PolicyValue) bool {
	return pv.Period == models.PeriodAll || (pv.Period == models.PeriodPeak) == v.AtPeak
}

// Left is what remains of this week's GPU-hours.
func (v LimitsView) Left() int64 {
	if v.Weekly == nil {
		return 0
	}
	left := v.Weekly.Value + v.Balance - v.Used
	if left < 0 {
		return 0
	}
	return left
}

// ModelAccess says whether the viewer's teams may book a restricted model.
type ModelAccess struct {
	Model   string
	Allowed bool
}

// ModelList turns the evaluator's model map into a sorted list.
func ModelList(m map[string]bool) []ModelAccess {
	out := make([]ModelAccess, 0, len(m))
	for k, ok := range m {
		out = append(out, ModelAccess{Model: k, Allowed: ok})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Model < out[j].Model })
	return out
}

// LendView is the lending part of the limits page and its ledger.
type LendView struct {
	Users  []models.User
	Teams  []models.Membership
	Pools  map[int64]int64 // team id → GPU-minutes in its pool this week
	Loans  []models.QuotaLoan
	Form   LendForm
	Errors map[string]string
}

// LendForm is the lending form as typed.
type LendForm struct {
	Action string // "lend", "pool" or "draw"
	To     string
	Team   string
	Hours  string
	Note   string
}

// AdminPolicyView is the admin policy page.
type AdminPolicyView struct {
	Limits     []models.PolicyLimit
	Teams      []models.Team
	Users      []models.User
	Settings   models.PolicySettings
	ModelTeams map[string][]int64
	GPUModels  []string
	Scope      string // the scope being edited
	ScopeID    int64
	Form       map[string]string // field (rule key) → typed value
	Errors     map[string]string
	PeakForm   PeakForm
	Preview    *models.User // the user whose effective values are shown
	Effective  []models.PolicyValue
}

// PeakForm is the peak-hours form as typed.
type PeakForm struct {
	Enabled     bool
	Days        [7]bool
	From, To    string
	AdminExempt bool
}

// ScopeName names a limit's scope for the admin tables.
func (v AdminPolicyView) ScopeName(p *Page, scope string, id int64) string {
	switch scope {
	case models.ScopeTeam:
		for _, t := range v.Teams {
			if t.ID == id {
				return p.Tr("policy.source.team", "Name", t.Name)
			}
		}
	case models.ScopeUser:
		for _, u := range v.Users {
			if u.ID == id {
				return p.Tr("policy.scope_user", "Name", u.Name)
			}
		}
	case models.ScopeGlobal:
		return p.Tr("policy.source.global")
	}
	return scope + " " + itoa64(id)
}

// ScopeValue is the scope selector's value: "global", "team:3", "user:7".
func ScopeValue(scope string, id int64) string {
	if scope == models.ScopeGlobal {
		return scope
	}
	return scope + ":" + itoa64(id)
}

// TeamAllowed reports whether team may book model under the restrictions.
func (v AdminPolicyView) TeamAllowed(model string, team int64) bool {
	for _, id := range v.ModelTeams[model] {
		if id == team {
			return true
		}
	}
	return false
}

// PriorityFormView is the priority request form: the booking's values and
// the four parts of the justification.
type PriorityFormView struct {
	Form     BookingForm
	Nodes    []models.Node
	Node     *models.Node
	Purpose  string
	Urgency  string
	Plan     string
	GiveBack string
	Preempt  bool
	Breaches []models.PolicyBreach // why a standard booking was refused, if it was
	Errors   map[string]string
	Teams    []models.Membership // the requester's teams: one whose leads decide
	TeamID   int64               // the chosen one
	// Picks is the booking form's node and GPU boxes with who holds each
	// until when, shared with the booking form (GPUPicks, NodePicker).
	Picks BookingFormView
}

// RequestView is one priority request with what a decider needs to know.
type RequestView struct {
	R          models.PriorityRequest
	GPULabels  string
	InWay      []ConflictLine // the bookings it would pre-empt or that block it
	RecentUsed int64          // the requester's GPU-minutes of the last 7 days
	Breaches   []models.PolicyBreach
	Events     []models.AuditEvent
	CanDecide  bool
	// Plan is what approving would do to the bookings in the way (for a
	// decider of a pending pre-empting request); PlanHash is its
	// fingerprint, carried by the approve form; PlanErr why there is none.
	Plan        []models.Preemption
	PlanHash    string
	PlanErr     error
	GPUNames    map[int64]string // unit names by ID (models.UnitNames)
	CanWithdraw bool
	// Problem is why an approval just did nothing (the calendar changed),
	// and Changes what changed from the plan the decider had been shown.
	Problem string
	Changes []string
}

// ApprovalsView is the approvals queue.
type ApprovalsView struct {
	Items []RequestView
	Mine  []models.PriorityRequest // the viewer's own requests
}
