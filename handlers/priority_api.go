package handlers

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/api"
)

// toRequestJSON fills a priority request's answer, times in UTC.
func toRequestJSON(r *models.PriorityRequest) api.Request {
	return api.Request{ID: r.ID, UserID: r.UserID, TeamID: r.TeamID, NodeID: r.NodeID, GPUIDs: idList(r.GPUIDs), StartsAt: r.StartsAt.UTC(),
		EndsAt: r.EndsAt.UTC(), Note: r.Note, Purpose: r.Purpose, Urgency: r.Urgency, Plan: r.Plan, GiveBack: r.GiveBack,
		Preempt: r.Preempt, Status: r.Status, Comment: r.Comment, BookingID: r.BookingID, DecidedAt: utcPtr(r.DecidedAt), CreatedAt: r.CreatedAt.UTC()}
}

// CreateAPIRequest answers POST /api/v1/requests: a booking refused with
// code "policy" (or in others' way) goes in as a priority request, with
// the booking's fields plus purpose, urgency, plan, give_back and preempt.
// 201 with the pending request; 422 with every problem by field.
func (h *Priority) CreateAPIRequest(c echo.Context) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	body, err := readAPIBody(c)
	if err != nil {
		return err
	}
	r, err := parseRequestBody(body, h.Limits)
	if err != nil {
		return err
	}
	r.UserID = u.ID
	if err := h.Store.CreateRequest(c.Request().Context(), r, h.Limits, h.Now(), Actor(c), h.Mailer()); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toRequestJSON(r))
}

// ShowAPIRequest answers GET /api/v1/requests/{id} for the requester (its
// status, decision and booking).
func (h *Priority) ShowAPIRequest(c echo.Context) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	r, err := h.Store.Request(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if r.UserID != u.ID && !u.IsAdmin {
		return models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "request"))
	}
	return c.JSON(http.StatusOK, toRequestJSON(r))
}

// parseRequestBody reads a request strictly, like a booking.
func parseRequestBody(body []byte, lim models.BookingLimits) (*models.PriorityRequest, error) {
	fe := models.FieldErrors{}
	fields, ok := parseObject(body, fe, newRequestFields...)
	if !ok {
		return nil, fe.Err()
	}
	r := &models.PriorityRequest{
		GPUIDs:   parseGPUIDs(fields["gpu_ids"], lim, fe),
		StartsAt: parseTimeField(fields, "starts_at", "err.start_required", fe),
		EndsAt:   parseTimeField(fields, "ends_at", "err.end_required", fe),
		Note:     parseNote(fields["note"], lim, fe),
	}
	for name, dst := range map[string]*string{"purpose": &r.Purpose, "urgency": &r.Urgency, "plan": &r.Plan, "give_back": &r.GiveBack} {
		if raw, ok := fields[name]; ok && (isNull(raw) || json.Unmarshal(raw, dst) != nil) {
			fe.Add(name, models.M("err.json_type"))
		}
	}
	if raw, ok := fields["preempt"]; ok && (isNull(raw) || json.Unmarshal(raw, &r.Preempt) != nil) {
		fe.Add("preempt", models.M("err.json_type"))
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return r, nil
}
