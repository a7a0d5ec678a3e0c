package handlers

import (
	"net/http"
	"sort"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/api"
)

// baseUnits names the unit a rule's value is stored in (models.PolicyRules).
var baseUnits = map[string]string{models.RuleMaxGPUs: api.UnitGPUs, models.RuleMaxGPUHours: api.UnitGPUMinutes}

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
	out := api.Limits{Limits: []api.Limit{}, Exempt: in.IsAdmin && in.Settings.AdminExempt, AtPeak: in.Settings.Peak.IsPeak(now, zone),
		TimeZone: zone.String(), WeekStart: ws.UTC(), UsedGPUMinutes: models.UsedGPUMinutes(in.Held, ws, models.NextWeek(ws)),
		LoanBalance: models.LoanBalance(in.Loans, u.ID, ws), Models: []api.ModelAccess{}}
	for _, v := range in.EffectiveAll() {
		unit, ok := baseUnits[v.Rule]
		if !ok {
			unit = api.UnitMinutes
		}
		out.Limits = append(out.Limits, api.Limit{Key: models.Key(v.Rule, v.Period), Rule: v.Rule, Period: v.Period, Value: v.Value,
			Unit: unit, Source: v.Source.Scope, SourceName: v.Source.Name})
	}
	if w, ok := in.Effective(models.RuleMaxGPUHours, models.PeriodAll); ok {
		out.WeeklyGPUMinutes = &w.Value
	}
	for m, ok := range in.AllowedModels() {
		out.Models = append(out.Models, api.ModelAccess{Model: m, Allowed: ok})
	}
	sort.Slice(out.Models, func(i, j int) bool { return out.Models[i].Model < out.Models[j].Model })
	return c.JSON(http.StatusOK, out)
}
