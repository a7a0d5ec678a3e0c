package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Lend records a ledger line for this week: lend to a colleague, give to
// one's team's pool, or draw from it. Problems re-render with 422.
func (h *Policies) Lend(c echo.Context) error {
	u := models.UserFromContext(c.Request().Context())
	f := views.LendForm{Action: c.FormValue("action"), To: c.FormValue("to"), Team: c.FormValue("team"),
		Hours: c.FormValue("hours"), Note: c.FormValue("note")}
	fe := models.FieldErrors{}
	l := &models.QuotaLoan{Note: f.Note}
	if hrs, err := strconv.ParseFloat(strings.TrimSpace(f.Hours), 64); err == nil && hrs > 0 && hrs < 1e6 {
		l.GPUMinutes = int64(hrs*60 + 0.5)
	}
	me := u.ID
	switch f.Action {
	case "lend":
		l.FromUser, l.ToUser = &me, optionalID(f.To)
	case "pool":
		l.FromUser, l.TeamID = &me, optionalID(f.Team)
	case "draw":
		l.ToUser, l.TeamID = &me, optionalID(f.Team)
	default:
		fe.Add("to", models.M("policy.err.loan_to"))
	}
	if (f.Action == "pool" || f.Action == "draw") && l.TeamID == nil || f.Action == "lend" && l.ToUser == nil {
		fe.Add("to", models.M("policy.err.loan_to"))
	}
	err := fe.Err()
	if err == nil {
		err = h.Store.CreateLoan(c.Request().Context(), l, h.Limits, h.Now(), Actor(c))
	}
	if models.ErrorCode(err) == models.EINVALID {
		return h.renderLedger(c, http.StatusUnprocessableEntity, f, h.Translator(c).Fields(err))
	}
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("policy.lent"))
	return RedirectSeeOther(c, "/limits/ledger")
}

func optionalID(s string) *int64 {
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || id <= 0 {
		return nil
	}
	return &id
}
