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

const (
	auditPageSize = 50
	// auditCSVMax bounds one export; a narrower filter gets the rest.
	auditCSVMax = 100_000
)

// Audit shows the audit log, filtered by the query string, newest first, as
// sentences in the viewer's language; ?format=csv exports every event the
// filter selects.
func (h *Admin) Audit(c echo.Context) error {
	ctx := c.Request().Context()
	p := h.NewPage(c)
	form, f, fe, err := h.auditFilter(c, p)
	if err != nil {
		return err
	}
	v := views.AdminAuditView{Form: form, Actions: models.AuditActionGroups, Page: f.Offset / auditPageSize}
	if err := fe.Err(); err != nil {
		v.Errors = p.T.Fields(err)
		return Render(c, http.StatusUnprocessableEntity, views.AdminAuditPage(p, v))
	}
	if wantsCSV(c) {
		return h.auditCSV(c, p, f)
	}
	f.Limit = auditPageSize + 1
	events, err := h.Store.AuditEvents(ctx, f)
	if err != nil {
		return err
	}
	if len(events) > auditPageSize {
		events = events[:auditPageSize]
		v.NextURL = auditPageURL(c.QueryParams(), v.Page+1)
	}
	if v.Page > 0 {
		v.PrevURL = auditPageURL(c.QueryParams(), v.Page-1)
	}
	if v.Lines, err = h.auditLines(c, p, events); err != nil {
		return err
	}
	q := c.QueryParams()
	q.Del("page")
	q.Set("format", "csv")
	v.CSVURL = "/admin/audit?" + q.Encode()
	return Render(c, http.StatusOK, views.AdminAuditPage(p, v))
}

// auditFilter reads the filter form; every bad value gets its field's message.
func (h *Admin) auditFilter(c echo.Context, p *views.Page) (views.AuditFilterForm, models.AuditFilter, models.FieldErrors, error) {
	form := views.AuditFilterForm{Action: c.QueryParam("action"), User: strings.TrimSpace(c.QueryParam("user")),
		TargetType: strings.TrimSpace(c.QueryParam("target_type")), TargetID: strings.TrimSpace(c.QueryParam("target_id")),
		Since: strings.TrimSpace(c.QueryParam("since")), Until: strings.TrimSpace(c.QueryParam("until"))}
	fe := models.FieldErrors{}
	userOK := fe.Check("user", &form.User, models.AuditFilterText)
	fe.Check("target_type", &form.TargetType, models.AuditFilterText)
	f := models.AuditFilter{Action: form.Action, TargetType: form.TargetType, TargetID: form.TargetID}
	if form.Action != "" && !models.ValidAuditAction(form.Action) {
		fe.Add("action", models.M("audit.err.action"))
	}
	if form.TargetID != "" {
		if _, err := strconv.ParseInt(form.TargetID, 10, 64); err != nil || form.TargetType == "" {
			fe.Add("target_id", models.M("audit.err.target"))
		}
	}
	if page := c.QueryParam("page"); page != "" {
		n, err := strconv.Atoi(page)
		if err != nil || n < 0 || n > auditCSVMax/auditPageSize {
			fe.Add("page", models.M("audit.err.page"))
		}
		f.Offset = max(n, 0) * auditPageSize
	}
	f.Since = parseDay(form.Since, "since", p.Location, fe)
	until := parseDay(form.Until, "until", p.Location, fe)
	if !until.IsZero() {
		f.Until = until.AddDate(0, 0, 1) // the whole "until" day
		if !f.Since.IsZero() && until.Before(f.Since) {
			fe.Add("until", models.M("audit.err.range"))
		}
	}
	if form.User != "" && userOK {
		u, err := h.Store.UserByEmail(c.Request().Context(), models.NormalizeEmail(form.User))
		switch models.ErrorCode(err) {
		case "":
			f.About = u.ID
		case models.ENOTFOUND:
			fe.Add("user", models.M("audit.err.user", "Email", form.User))
		default:
			return form, f, fe, err
		}
	}
	return form, f, fe, nil
}

// auditLines turns events into sentences, looking up every name they need
// in one query per kind.
func (h *Admin) auditLines(c echo.Context, p *views.Page, events []models.AuditEvent) ([]views.AuditLine, error) {
	seen := map[string]map[int64]bool{}
	ids := map[string][]int64{}
	for _, e := range events {
		for _, r := range models.DescribeAudit(e).Refs {
			if r.ID == 0 || seen[r.Kind][r.ID] {
				continue
			}
			if seen[r.Kind] == nil {
				seen[r.Kind] = map[int64]bool{}
			}
			seen[r.Kind][r.ID] = true
			ids[r.Kind] = append(ids[r.Kind], r.ID)
		}
	}
	names, err := h.Store.AuditNames(c.Request().Context(), ids)
	if err != nil {
		return nil, err
	}
	lines := make([]views.AuditLine, len(events))
	for i, e := range events {
		lines[i] = p.AuditLine(e, names)
	}
	return lines, nil
}

// auditCSV sends every event f selects, read 500 at a time, as sentences
// with the raw fields beside them; each cell is defused like every CSV
// gpubook writes (csvCell).
func (h *Admin) auditCSV(c echo.Context, p *views.Page, f models.AuditFilter) error {
	var rows [][]string
	f.Offset, f.Limit = 0, 500
	complete := false
	for len(rows) < auditCSVMax {
		events, err := h.Store.AuditEvents(c.Request().Context(), f)
		if err != nil {
			return err
		}
		lines, err := h.auditLines(c, p, events)
		if err != nil {
			return err
		}
		for _, l := range lines {
			e := l.Event
			rows = append(rows, []string{p.Local(e.At, time.RFC3339), l.Sentence(), l.Action, e.IP,
				e.ActorLabel, e.Action, e.TargetType, e.TargetID, e.Details})
		}
		if len(events) < f.Limit {
			complete = true
			break
		}
		f.Offset += f.Limit
	}
	if !complete { // say so in the file rather than stop without a word
		rows = append(rows, []string{"", p.Tr("audit.csv_cut", "Max", auditCSVMax)})
	}
	head := []string{p.Tr("admin.when"), p.Tr("audit.event"), p.Tr("admin.action"), "IP",
		p.Tr("admin.actor"), p.Tr("audit.code"), p.Tr("audit.target_type"), p.Tr("audit.target_id"), p.Tr("admin.details")}
	return sendCSV(c, "gpubook-audit.csv", head, rows)
}

func parseDay(s, field string, loc *time.Location, fe models.FieldErrors) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.ParseInLocation("2006-01-02", s, loc)
	if err != nil {
		fe.Add(field, models.M("audit.err.date"))
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
