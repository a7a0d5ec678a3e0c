package handlers

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// staleApproval answers an approval the store refused because the
// calendar changed since the decider's page (the plan, a booking in the
// way, a GPU out of service): the request again, with the plan as it is
// now, why nothing was done and, booking by booking, what changed from the
// plan shown (the form's "shown"). A request no longer pending, or one the
// user may no longer decide, keeps the error page.
func (h *Priority) staleApproval(c echo.Context, id int64, shown string, cause error) error {
	ctx := c.Request().Context()
	r, err := h.Store.Request(ctx, id)
	if err != nil {
		return err
	}
	u := models.UserFromContext(ctx)
	lead, err := h.Store.LeadTeams(ctx, u.ID)
	if err != nil {
		return err
	}
	if r.Status != models.RequestPending || models.CanDecide(u, r, lead) != nil {
		return cause
	}
	v, err := h.requestView(ctx, *r, true)
	if err != nil {
		return err
	}
	t := h.Translator(c)
	v.Problem = t.Err(cause)
	if v.PlanErr != nil && t.Err(v.PlanErr) == v.Problem {
		v.PlanErr = nil // said once
	}
	for _, m := range models.PlanChanges(shown, v.Plan) {
		for _, k := range []string{"Action", "Was"} {
			if a, ok := m.Data[k].(string); ok && actionKeys[a] != "" {
				m.Data[k] = t.T(actionKeys[a])
			}
		}
		v.Changes = append(v.Changes, t.Msg(m))
	}
	if v.Events, err = h.Store.AuditEvents(ctx, models.AuditFilter{TargetType: "request", TargetID: strconv.FormatInt(id, 10), Limit: 100}); err != nil {
		return err
	}
	slices.Reverse(v.Events)
	return Render(c, http.StatusConflict, views.RequestPage(h.NewPage(c), v))
}

// actionKeys name the ways of giving way in the sentences of what changed.
var actionKeys = map[string]string{
	models.GiveWayMove:   "request.changed.act.move",
	models.GiveWaySplit:  "request.changed.act.split",
	models.GiveWayCancel: "request.changed.act.cancel",
}
