package api

import "time"

// Units a Limit's value is in: the rule's base unit, so that a script
// compares integers and never rounds.
const (
	UnitGPUs       = "gpus"
	UnitMinutes    = "minutes"
	UnitGPUMinutes = "gpu_minutes"
)

// Limits answers GET /limits: what the /limits page shows, for the
// terminal: the rules that apply to the token's user now and where each
// is set, and this week's GPU-minutes used and left.
type Limits struct {
	Limits         []Limit   `json:"limits"`
	Exempt         bool      `json:"exempt"`
	AtPeak         bool      `json:"at_peak"`
	TimeZone       string    `json:"time_zone"`
	WeekStart      time.Time `json:"week_start"`
	UsedGPUMinutes int64     `json:"used_gpu_minutes"`
	// WeeklyGPUMinutes is null when no weekly rule applies.
	WeeklyGPUMinutes *int64        `json:"weekly_gpu_minutes"`
	LoanBalance      int64         `json:"loan_balance_gpu_minutes"`
	Models           []ModelAccess `json:"models"`
}

// Limit is one effective rule.
type Limit struct {
	Key        string `json:"key" doc:"rule, or rule.period: the field name a policy refusal uses"`
	Rule       string `json:"rule"`
	Period     string `json:"period" enum:",peak,offpeak"`
	Value      int64  `json:"value"`
	Unit       string `json:"unit" enum:"gpus,minutes,gpu_minutes"`
	Source     string `json:"source" enum:"default,global,team,user"`
	SourceName string `json:"source_name"`
}

// ModelAccess says whether the user may book a GPU model.
type ModelAccess struct {
	Model   string `json:"model"`
	Allowed bool   `json:"allowed"`
}
