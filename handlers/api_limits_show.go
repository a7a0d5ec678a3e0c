package handlers

import (
	"net/http"
	"sort"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// limitJSON is one effective rule on the wire, in the rule's base unit, so
// that a script compares integers and never rounds.
type limitJSON struct {
	Key        string `json:"key"`
	Rule       string `json:"rule"`
	Period     string `json:"period"`
	Value      int64  `json:"value"`
	Unit       string `json:"unit"`
	Source     string `json:"source"`
	SourceName string `json:"source_name"`
}

type limitsJSON struct {
	Limits           []limitJSON `json:"limits"`
	Exempt           bool        `json:"exempt"`
	AtPeak           bool        `json:"at_peak"`
	TimeZone         string      `json:"time_zone"`
	WeekStart        time.Time   `json:"week_start"`
	UsedGPUMinutes   int64       `json:"used_gpu_minutes"`
	WeeklyGPUMinutes *int64      `json:"weekly_gpu_minutes"`
	LentBalance      int64       `json:"loan_balance_gpu_minutes"`
	Models           []modelJSON `json:"models"`
}

type modelJSON struct {
	Model   string `json:"model"`
	Allowed bool   `json:"allowed"`
}

// baseUnits names the unit a rule's value is stored in (models.PolicyRules).
var baseUnits = map[string]string{models.RuleMaxGPUs: "gpus", models.RuleMaxGPUHours: "gpu_minutes"}

// ShowAPILimits answers GET /api/v1/limits: what the /limits page shows,
// for the terminal: the rules that apply to the token's user now and where
// each is set, and this week's GPU-minutes used and left.
func (h *Policies) ShowAPILimits(c echo.Context) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	now := h.Now()
	in, err := h.Store.PolicyInputFor(c.Request().Context(), u.ID, now, now, h.Limits)
	if err != nil {
		return err
	}
	zone := h.clusterZone()
	ws := models.WeekStart(now, zone)
	out := limitsJSON{Limits: []limitJSON{}, Exempt: in.IsAdmin && in.Settings.AdminExempt, AtPeak: in.Settings.Peak.IsPeak(now, zone),
		TimeZone: zone.String(), WeekStart: ws.UTC(), UsedGPUMinutes: models.UsedGPUMinutes(in.Held, ws, models.NextWeek(ws)),
		LentBalance: models.LoanBalance(in.Loans, u.ID, ws), Models: []modelJSON{}}
	for _, v := range in.EffectiveAll() {
		unit, ok := baseUnits[v.Rule]
		if !ok {
			unit = "minutes"
		}
		out.Limits = append(out.Limits, limitJSON{Key: models.Key(v.Rule, v.Period), Rule: v.Rule, Period: v.Period, Value: v.Value,
			Unit: unit, Source: v.Source.Scope, SourceName: v.Source.Name})
	}
	if w, ok := in.Effective(models.RuleMaxGPUHours, models.PeriodAll); ok {
		out.WeeklyGPUMinutes = &w.Value
	}
	for m, ok := range in.AllowedModels() {
		out.Models = append(out.Models, modelJSON{Model: m, Allowed: ok})
	}
	sort.Slice(out.Models, func(i, j int) bool { return out.Models[i].Model < out.Models[j].Model })
	return c.JSON(http.StatusOK, out)
}
