package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Priority serves priority requests: the form, the request's page, the
// approvals queue and the decisions. BaseURL makes the links in emails.
type Priority struct {
	*Base
	BaseURL string
}

// New is the request form, filled from the refused booking's values
// (/requests/new?gpu=…&starts_at=…) and showing the rules it breaks.
func (h *Priority) New(c echo.Context) error {
	f, req, fe := h.readForm(c, c.QueryParams())
	v := views.PriorityFormView{Form: f}
	if len(fe) == 0 && len(req.GPUIDs) > 0 && !req.StartsAt.IsZero() && !req.EndsAt.IsZero() {
		if bs, err := h.Store.CheckBooking(c.Request().Context(), req, h.Limits, h.Now()); err == nil {
			v.Breaches = bs
		}
	}
	return h.renderForm(c, http.StatusOK, v)
}

// readForm reads the booking part of the form, or of the query for New;
// a request given a duration shows the end it comes to.
func (h *Priority) readForm(c echo.Context, vals url.Values) (views.BookingForm, models.NewBooking, models.FieldErrors) {
	u := models.UserFromContext(c.Request().Context())
	loc := u.Location(h.Location)
	f, req, fe := bookingForm(vals, u, loc)
	if strings.TrimSpace(f.End) == "" && !req.EndsAt.IsZero() {
		f.End = views.LocalInput(req.EndsAt, loc)
	}
	return f, req, fe
}

// renderForm shows the request form with the booking form's node choice
// and GPU boxes (who holds each until when over the typed range).
func (h *Priority) renderForm(c echo.Context, status int, v views.PriorityFormView) error {
	v.Picks = views.BookingFormView{Form: v.Form, Errors: v.Errors}
	if err := (&Bookings{Base: h.Base}).formNode(c, &v.Picks); err != nil {
		return err
	}
	v.Nodes, v.Node = v.Picks.Nodes, v.Picks.Node
	u := models.UserFromContext(c.Request().Context())
	var err error
	if v.Teams, err = h.Store.MembershipsOf(c.Request().Context(), u.ID); err != nil {
		return err
	}
	return Render(c, status, views.PriorityFormPage(h.NewPage(c), v))
}

// Create files the request. It holds nothing; the team's leads are told,
// or the admins when the requester is in no team.
func (h *Priority) Create(c echo.Context) error {
	form, err := formParams(c)
	if err != nil {
		return err
	}
	f, req, fe := h.readForm(c, form)
	r := &models.PriorityRequest{UserID: req.UserID, GPUIDs: req.GPUIDs, StartsAt: req.StartsAt, EndsAt: req.EndsAt, Note: req.Note,
		Purpose: form.Get("purpose"), Urgency: form.Get("urgency"), Plan: form.Get("plan"), GiveBack: form.Get("give_back"),
		Preempt: form.Get("preempt") != ""}
	if t := form.Get("team_id"); t != "" {
		id, perr := strconv.ParseInt(t, 10, 64)
		if perr != nil || id <= 0 {
			fe.Add("team_id", models.M("request.err.team"))
		}
		r.TeamID = &id
	}
	err = fe.Err()
	if err == nil {
		err = h.Store.CreateRequest(c.Request().Context(), r, h.Limits, h.Now(), Actor(c), h.Mailer())
	}
	if models.ErrorCode(err) == models.EINVALID {
		v := views.PriorityFormView{Form: f, Purpose: r.Purpose, Urgency: r.Urgency, Plan: r.Plan, GiveBack: r.GiveBack,
			Preempt: r.Preempt, Errors: h.Translator(c).Fields(err)}
		if r.TeamID != nil {
			v.TeamID = *r.TeamID
		}
		return h.renderForm(c, http.StatusUnprocessableEntity, v)
	}
	if err != nil {
		return err
	}
	created := "request.created"
	if r.TeamID == nil {
		created = "request.created_admins" // no team: the admins decide
	}
	h.Flash(c, "ok", h.Translator(c).T(created))
	return RedirectSeeOther(c, "/requests/"+itoa64(r.ID))
}

// Mailer renders request emails for the store, each in its recipient's
// language and zone.
func (h *Priority) Mailer() models.Mailer {
	return func(n models.Notice, to *models.User) (models.OutboxMessage, error) {
		return views.EmailMessage(views.EmailEnvFor(h.I18n, h.BaseURL, h.Location, to), n.Kind, n.Kind, to, n)
	}
}
