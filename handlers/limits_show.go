package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// ShowLimits is /limits: the rules that apply to the user now, or at ?at= (a
// datetime-local in their zone), where each comes from, and this week's
// GPU-hours used and left.
func (h *Policies) ShowLimits(c echo.Context) error {
	v, err := h.limitsView(c)
	if err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.LimitsPage(h.NewPage(c), v))
}

// Ledger is /limits/ledger: lend, give to a pool, draw, and the week's ledger.
func (h *Policies) Ledger(c echo.Context) error {
	return h.renderLedger(c, http.StatusOK, views.LendForm{Action: "lend"}, nil)
}

func (h *Policies) renderLedger(c echo.Context, status int, f views.LendForm, errs map[string]string) error {
	v, err := h.limitsView(c)
	if err != nil {
		return err
	}
	v.Lend.Form, v.Lend.Errors = f, errs
	return Render(c, status, views.LedgerPage(h.NewPage(c), v))
}

func (h *Policies) limitsView(c echo.Context) (views.LimitsView, error) {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	now := h.Now()
	v := views.LimitsView{At: now, AtInput: c.QueryParam("at"), Zone: h.clusterZone().String()}
	if t, ok := parseFormTime(v.AtInput, u.Location(h.Location)); ok {
		v.At = t
	}
	from, to := now, v.At // this week and the chosen time's, in either order
	if to.Before(from) {
		from, to = to, from
	}
	in, err := h.Store.PolicyInputFor(ctx, u.ID, from, to, h.Limits)
	if err != nil {
		return v, err
	}
	v.Values, v.Settings, v.Models = in.EffectiveAll(), in.Settings, views.ModelList(in.AllowedModels())
	v.AtPeak = in.Settings.Peak.IsPeak(v.At, h.clusterZone())
	v.Exempt = in.IsAdmin && in.Settings.AdminExempt
	v.WeekStart = models.WeekStart(now, h.clusterZone())
	// Rules run on the cluster's clock; a viewer elsewhere also reads them on theirs.
	v.OwnZone = models.ZonesDiffer(u.Location(h.Location), h.clusterZone(), now, v.WeekStart, models.NextWeek(v.WeekStart))
	if w, ok := in.Effective(models.RuleMaxGPUHours, models.PeriodAll); ok {
		v.Weekly = &w
	}
	v.Used = models.UsedGPUMinutes(in.Held, v.WeekStart, models.NextWeek(v.WeekStart))
	v.Balance = models.LoanBalance(in.Loans, u.ID, v.WeekStart)
	return v, h.fillLend(ctx, u, in, &v)
}

// fillLend loads who one can lend to, one's teams' pools and the week's ledger.
func (h *Policies) fillLend(ctx context.Context, u *models.User, in models.PolicyInput, v *views.LimitsView) error {
	users, err := h.Store.Users(ctx)
	if err != nil {
		return err
	}
	for _, o := range users {
		if o.ID != u.ID {
			v.Lend.Users = append(v.Lend.Users, o)
		}
	}
	if v.Lend.Teams, err = h.Store.MembershipsOf(ctx, u.ID); err != nil {
		return err
	}
	if v.Lend.Loans, err = h.Store.Loans(ctx, u.ID, in.TeamIDs, v.WeekStart); err != nil {
		return err
	}
	v.Lend.Pools = map[int64]int64{}
	for _, m := range v.Lend.Teams {
		v.Lend.Pools[m.TeamID] = models.PoolBalance(v.Lend.Loans, m.TeamID, v.WeekStart)
	}
	return nil
}

func (h *Policies) clusterZone() *time.Location {
	if h.Limits.Location != nil {
		return h.Limits.Location
	}
	if h.Location != nil {
		return h.Location
	}
	return time.UTC
}
