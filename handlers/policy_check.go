package handlers

import (
	"maps"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Check is the booking form's live policy check (htmx hx-post on every
// change): it answers the PolicyCheck fragment, always 200, saying which
// rules the request breaks before it is submitted. A form still missing
// its GPUs or times gets an empty verdict rather than errors.
func (h *Policies) Check(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	form, err := formParams(c)
	if err != nil {
		return err
	}
	f, req, fe := bookingForm(form, u, u.Location(h.Location))
	p := h.NewPage(c)
	v := views.PolicyCheckView{}
	if len(fe) > 0 || len(req.GPUIDs) == 0 || req.StartsAt.IsZero() || req.EndsAt.IsZero() {
		return Render(c, http.StatusOK, views.PolicyCheck(p, v))
	}
	bs, err := h.Store.CheckBooking(ctx, req, h.Limits, h.Now())
	switch models.ErrorCode(err) {
	case "":
		v.Checked, v.Breaches = true, bs
		if len(bs) > 0 {
			v.Request = views.RequestLink(f)
		}
	case models.EINVALID:
		v.Problems = SortedFields(p.T.Fields(err))
	default:
		return err
	}
	return Render(c, http.StatusOK, views.PolicyCheck(p, v))
}

// BreachesOf rebuilds the breaches of an EPOLICY error from its fields, in
// field order, for the form that was refused.
func BreachesOf(err error) []models.PolicyBreach {
	e := models.AsError(err)
	var out []models.PolicyBreach
	for _, k := range slices.Sorted(maps.Keys(e.Fields)) {
		out = append(out, models.PolicyBreach{Rule: k, Msg: e.Fields[k]})
	}
	return out
}

// SortedFields lists translated field problems in field order, so that a
// page that runs them together says them in the same order every time.
func SortedFields(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
