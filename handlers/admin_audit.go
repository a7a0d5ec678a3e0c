package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

const auditPageSize = 50

// auditActions are offered in the filter: the known actions and their areas.
var auditActions = []string{"auth.", models.AuditSignIn, models.AuditSignOut, models.AuditSignInFailed,
	"booking.", models.AuditBookingCreate, models.AuditBookingCancel, models.AuditBookingRelease, models.AuditBookingExtend, models.AuditBookingEditNote,
	"user.", models.AuditUserCreate, models.AuditUserUpdate, models.AuditUserAdmin,
	"team.", models.AuditTeamCreate, models.AuditMemberSet, models.AuditMemberRemove,
	"node.", models.AuditNodeCreate, models.AuditNodeRename, models.AuditGPUService,
	"token.", models.AuditTokenCreate, models.AuditTokenRevoke}

// Audit shows the audit log, filtered by the query string, newest first.
func (h *Admin) Audit(c echo.Context) error {
	ctx := c.Request().Context()
	p := h.NewPage(c)
	form := views.AuditFilterForm{Action: c.QueryParam("action"), Actor: strings.TrimSpace(c.QueryParam("actor")),
		TargetType: strings.TrimSpace(c.QueryParam("target_type")), TargetID: strings.TrimSpace(c.QueryParam("target_id")),
		Since: c.QueryParam("since"), Until: c.QueryParam("until")}
	page, _ := strconv.Atoi(c.QueryParam("page"))
	page = max(page, 0)
	f := models.AuditFilter{Action: form.Action, TargetType: form.TargetType, TargetID: form.TargetID, Limit: auditPageSize + 1, Offset: page * auditPageSize}
	fe := models.FieldErrors{}
	f.Since = parseDay(form.Since, "since", p.Location, fe)
	if until := parseDay(form.Until, "until", p.Location, fe); !until.IsZero() {
		f.Until = until.AddDate(0, 0, 1) // the whole "until" day
	}
	status := http.StatusOK
	v := views.AdminAuditView{Form: form, Actions: auditActions, Page: page}
	if form.Actor != "" {
		u, err := h.Store.UserByEmail(ctx, form.Actor)
		switch models.ErrorCode(err) {
		case "":
			f.ActorID = u.ID
		case models.ENOTFOUND:
			fe.Add("actor", models.M("err.not_found", "What", "user"))
		default:
			return err
		}
	}
	if err := fe.Err(); err != nil {
		v.Errors, status = p.T.Fields(err), http.StatusUnprocessableEntity
		return Render(c, status, views.AdminAuditPage(p, v))
	}
	events, err := h.Store.AuditEvents(ctx, f)
	if err != nil {
		return err
	}
	if len(events) > auditPageSize {
		events, v.HasNext = events[:auditPageSize], true
		v.NextURL = auditPageURL(c.QueryParams(), page+1)
	}
	if page > 0 {
		v.PrevURL = auditPageURL(c.QueryParams(), page-1)
	}
	v.Events = events
	return Render(c, status, views.AdminAuditPage(p, v))
}

func parseDay(s, field string, loc *time.Location, fe models.FieldErrors) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.ParseInLocation("2006-01-02", s, loc)
	if err != nil {
		fe.Add(field, models.M("err.time_invalid"))
	}
	return t
}

func auditPageURL(q url.Values, page int) string {
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	q2.Set("page", strconv.Itoa(page))
	return "/admin/audit?" + q2.Encode()
}
