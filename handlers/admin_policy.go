package handlers

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Policies serves the booking policy: the admin page, the limits page, the
// ledger and the booking form's live check.
type Policies struct{ *Base }

// AdminShow is /admin/policies: every limit set, the form of one scope
// (?scope=global|team:ID|user:ID), peak hours, model restrictions and the
// effective values of one user (?user=ID) with where each comes from.
func (h *Policies) AdminShow(c echo.Context) error {
	scope, id, ok := parseScope(c.QueryParam("scope"))
	if !ok {
		scope, id = models.ScopeGlobal, 0
	}
	v := views.AdminPolicyView{Scope: scope, ScopeID: id}
	return h.renderAdmin(c, http.StatusOK, v, true)
}

// renderAdmin loads the page's data; fill is false when v.Form and
// v.PeakForm hold what the admin typed and must be shown again.
func (h *Policies) renderAdmin(c echo.Context, status int, v views.AdminPolicyView, fill bool) error {
	ctx := c.Request().Context()
	var err error
	if v.Limits, err = h.Store.PolicyLimits(ctx); err != nil {
		return err
	}
	if v.Teams, err = h.Store.Teams(ctx); err != nil {
		return err
	}
	if v.Users, err = h.Store.Users(ctx); err != nil {
		return err
	}
	if v.Settings, err = h.Store.PolicySettings(ctx); err != nil {
		return err
	}
	if v.ModelTeams, err = h.Store.ModelTeams(ctx); err != nil {
		return err
	}
	gpus, err := h.Store.GPUs(ctx)
	if err != nil {
		return err
	}
	v.GPUModels = modelsOfGPUs(gpus)
	if fill {
		v.Form = scopeForm(v.Limits, v.Scope, v.ScopeID)
		v.PeakForm = views.PeakForm{Enabled: v.Settings.Peak.Enabled, Days: v.Settings.Peak.Days, AdminExempt: v.Settings.AdminExempt,
			From: models.ClockText(v.Settings.Peak.From), To: models.ClockText(v.Settings.Peak.To)}
	}
	if err := h.preview(c, &v); err != nil {
		return err
	}
	return Render(c, status, views.AdminPolicyPage(h.NewPage(c), v))
}

// preview fills the effective values of the user chosen with ?user=.
func (h *Policies) preview(c echo.Context, v *views.AdminPolicyView) error {
	uid, err := strconv.ParseInt(c.QueryParam("user"), 10, 64)
	if err != nil || uid <= 0 {
		return nil
	}
	for i := range v.Users {
		if v.Users[i].ID == uid {
			v.Preview = &v.Users[i]
		}
	}
	if v.Preview == nil {
		return nil
	}
	now := h.Now()
	in, err := h.Store.PolicyInputFor(c.Request().Context(), uid, now, now, h.Limits)
	if err != nil {
		return err
	}
	v.Effective = in.EffectiveAll()
	return nil
}

func modelsOfGPUs(gpus []models.GPU) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range gpus {
		if !seen[g.Model] {
			seen[g.Model] = true
			out = append(out, g.Model)
		}
	}
	sort.Strings(out)
	return out
}

// scopeForm is the limits form of one scope, filled with its values.
func scopeForm(ls []models.PolicyLimit, scope string, id int64) map[string]string {
	f := map[string]string{}
	for _, l := range ls {
		if l.Scope == scope && l.ScopeID == id {
			f[models.Key(l.Rule, l.Period)] = models.FormatValue(l.Rule, l.Value)
		}
	}
	return f
}

// parseScope reads "global", "team:3" or "user:7".
func parseScope(s string) (string, int64, bool) {
	if s == models.ScopeGlobal {
		return s, 0, true
	}
	kind, num, ok := strings.Cut(s, ":")
	id, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || id <= 0 || kind != models.ScopeTeam && kind != models.ScopeUser {
		return "", 0, false
	}
	return kind, id, true
}
