package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Pages serves pages that belong to no resource.
type Pages struct{ *Base }

// Home shows the start page: for a signed-in user the answer to "can I
// run now?" (my bookings, GPUs free now with one-click booking, the
// week's GPU-hours left, and for admins what needs attention).
func (h *Pages) Home(c echo.Context) error {
	p := h.NewPage(c)
	if p.User == nil {
		return Render(c, http.StatusOK, views.HomePage(p, views.HomeView{}))
	}
	v, err := h.homeView(c.Request().Context(), p.User, p.Now)
	if err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.HomePage(p, v))
}

func (h *Pages) homeView(ctx context.Context, u *models.User, now time.Time) (views.HomeView, error) {
	v := views.HomeView{Admin: u.IsAdmin}
	nodes, err := h.Store.Nodes(ctx)
	if err != nil {
		return v, err
	}
	// A day ahead is enough for "free for how long"; longer says "more than a day".
	bs, err := h.Store.Bookings(ctx, models.BookingFilter{From: now, To: now.Add(24 * time.Hour)})
	if err != nil {
		return v, err
	}
	// A booking is on one node: each node is judged on its own bookings
	// (every node on every booking sorted them all once a node, seconds at
	// thousands of nodes).
	byNode := map[int64][]models.Booking{}
	for _, b := range bs {
		byNode[b.NodeID] = append(byNode[b.NodeID], b)
	}
	for _, n := range nodes {
		v.Nodes++
		v.GPUs += len(n.GPUs)
		v.Free = append(v.Free, freeGroups(n, models.GPUStates(n.GPUs, byNode[n.ID], now, now.Add(time.Minute)))...)
	}
	if err := h.homeMine(ctx, u, now, &v); err != nil {
		return v, err
	}
	if err := h.homeWeek(ctx, u, now, &v); err != nil {
		return v, err
	}
	if u.IsAdmin {
		return v, h.homeAdmin(ctx, now, &v)
	}
	return v, nil
}

// freeGroups groups a node's GPUs free now by model, in index order, and
// its MIG instances by model and profile: "book now" books N of a group.
// A GPU split into instances is booked through them, never whole.
func freeGroups(n models.Node, states []models.GPUState) []views.FreeGroup {
	var out []views.FreeGroup
	at := map[string]int{}
	for _, s := range states {
		if !s.Free() || s.GPU.IsMIGParent() {
			continue
		}
		key := s.GPU.Model + "\x00" + s.GPU.MIGProfile
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, views.FreeGroup{NodeID: n.ID, NodeName: n.Name, Model: s.GPU.Model, Profile: s.GPU.MIGProfile})
		}
		g := &out[i]
		g.Free++
		if !s.FreeUntil.IsZero() && (g.FreeUntil.IsZero() || s.FreeUntil.Before(g.FreeUntil)) {
			g.FreeUntil = s.FreeUntil
		}
	}
	return out
}

// homeMine fills my running bookings and my next one.
func (h *Pages) homeMine(ctx context.Context, u *models.User, now time.Time, v *views.HomeView) error {
	mine, err := h.Store.Bookings(ctx, models.BookingFilter{UserID: u.ID, From: now, Limit: 20})
	if err != nil {
		return err
	}
	for i := range mine {
		switch {
		case !mine[i].StartsAt.After(now):
			v.Current = append(v.Current, mine[i])
		case v.Next == nil:
			v.Next = &mine[i]
		}
	}
	return nil
}

// homeWeek fills the week's GPU-hours left, by the policy evaluation that
// My limits shows.
func (h *Pages) homeWeek(ctx context.Context, u *models.User, now time.Time, v *views.HomeView) error {
	in, err := h.Store.PolicyInputFor(ctx, u.ID, now, now, h.Limits)
	if err != nil {
		return err
	}
	w, ok := in.Effective(models.RuleMaxGPUHours, models.PeriodAll)
	if !ok || (in.IsAdmin && in.Settings.AdminExempt) {
		return nil
	}
	zone := h.Limits.Location
	if zone == nil {
		zone = h.Location
	}
	ws := models.WeekStart(now, zone)
	lv := views.LimitsView{Weekly: &w, Used: models.UsedGPUMinutes(in.Held, ws, models.NextWeek(ws)), Balance: models.LoanBalance(in.Loans, u.ID, ws)}
	left := lv.Left()
	v.WeekLeft = &left
	return nil
}

// homeAdmin fills the enrolled nodes whose agent is silent and today's
// violations (today in the cluster's zone).
func (h *Pages) homeAdmin(ctx context.Context, now time.Time, v *views.HomeView) error {
	agents, err := h.Store.AgentNodes(ctx)
	if err != nil {
		return err
	}
	for _, a := range agents {
		if a.Enrolled && a.Offline(now) {
			v.Offline = append(v.Offline, a.NodeName)
		}
	}
	local := now.In(h.Location)
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, h.Location)
	vs, err := h.Store.Violations(ctx, models.ViolationFilter{Since: today, Limit: 1000})
	v.ViolationsToday = len(vs)
	return err
}
