package handlers

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// SaveLimits replaces the limits of one scope with the form's values.
// Any unreadable value, or one above the server's own limits, re-renders
// the form with 422 and writes nothing.
func (h *Policies) SaveLimits(c echo.Context) error {
	scope, id, ok := parseScope(c.FormValue("scope"))
	if !ok {
		return models.NewError(models.EINVALID, models.M("err.bad_request"))
	}
	form := map[string]string{}
	fe := models.FieldErrors{}
	var limits []models.PolicyLimit
	for _, s := range models.PolicyRules {
		for _, per := range s.Periods {
			key := models.Key(s.Rule, per)
			form[key] = c.FormValue(key)
			val, set, ok := models.ParseValue(s.Rule, form[key])
			switch {
			case !ok:
				fe.Add(key, models.M("policy.err.value_invalid"))
			case !set:
			case aboveSystem(s.Rule, val, h.Limits):
				fe.Add(key, models.M("policy.err.above_system", "Max", models.FormatValue(s.Rule, systemMax(s.Rule, h.Limits))))
			default:
				limits = append(limits, models.PolicyLimit{Scope: scope, ScopeID: id, Rule: s.Rule, Period: per, Value: val})
			}
		}
	}
	if len(fe) > 0 {
		v := views.AdminPolicyView{Scope: scope, ScopeID: id, Form: form, Errors: h.Translator(c).Fields(fe.Err())}
		return h.renderAdmin(c, http.StatusUnprocessableEntity, v, false)
	}
	if err := h.Store.SaveScopeLimits(c.Request().Context(), scope, id, limits, h.Now(), Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("policy.saved"))
	return RedirectSeeOther(c, "/admin/policies?scope="+views.ScopeValue(scope, id))
}

// systemMax is the server's own bound on a rule, which a policy cannot lift
// (ValidateNewBooking enforces it for every booking); 0 when there is none.
func systemMax(rule string, lim models.BookingLimits) int64 {
	switch rule {
	case models.RuleMaxLength:
		return int64(lim.MaxLength / time.Minute)
	case models.RuleMaxAhead:
		return int64(lim.MaxAhead / time.Minute)
	case models.RuleMaxGPUs:
		return int64(lim.MaxGPUCount)
	}
	return 0
}

func aboveSystem(rule string, v int64, lim models.BookingLimits) bool {
	max := systemMax(rule, lim)
	return max > 0 && v > max
}

// SaveSettings writes the peak schedule and the admin exemption.
func (h *Policies) SaveSettings(c echo.Context) error {
	form, err := formParams(c)
	if err != nil {
		return err
	}
	pf := views.PeakForm{Enabled: form.Get("peak_enabled") != "", AdminExempt: form.Get("admin_exempt") != "",
		From: form.Get("peak_from"), To: form.Get("peak_to")}
	s := models.PolicySettings{AdminExempt: pf.AdminExempt, Peak: models.PeakSchedule{Enabled: pf.Enabled}}
	fe := models.FieldErrors{}
	for _, d := range form["peak_day"] {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 6 {
			fe.Add("peak_days", models.M("err.bad_request"))
			continue
		}
		pf.Days[n], s.Peak.Days[n] = true, true
	}
	var okF, okT bool
	if s.Peak.From, okF = models.ParseClock(pf.From); !okF {
		fe.Add("peak_from", models.M("err.time_invalid"))
	}
	if s.Peak.To, okT = models.ParseClock(pf.To); !okT {
		fe.Add("peak_to", models.M("err.time_invalid"))
	}
	if okF && okT {
		if err := s.Peak.Validate(); err != nil {
			for k, m := range models.AsError(err).Fields {
				fe.Add(k, m)
			}
		}
	}
	if len(fe) > 0 {
		v := views.AdminPolicyView{Scope: models.ScopeGlobal, PeakForm: pf, Errors: h.Translator(c).Fields(fe.Err())}
		return h.renderAdmin(c, http.StatusUnprocessableEntity, v, false)
	}
	if err := h.Store.SavePolicySettings(c.Request().Context(), s, h.Now(), Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("policy.saved"))
	return RedirectSeeOther(c, "/admin/policies")
}

// SaveModels sets which teams may book one GPU model.
func (h *Policies) SaveModels(c echo.Context) error {
	form, err := formParams(c)
	if err != nil {
		return err
	}
	var teams []int64
	for _, s := range form["team"] {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return models.NewError(models.EINVALID, models.M("err.bad_request"))
		}
		teams = append(teams, id)
	}
	if err := h.Store.SetModelTeams(c.Request().Context(), form.Get("model"), teams, Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("policy.saved"))
	return RedirectSeeOther(c, "/admin/policies")
}
