package handlers

import (
	"context"
	"io"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/api"
)

// API serves the JSON API v1 (/api/v1). Every call is authenticated by a
// personal token (web.tokenAuth); errors render through the one error
// handler, in the token user's language.
type API struct{ *Base }

// The API's bodies are declared once, in models/api; the functions below
// fill them from the domain, every time in UTC.

// toGPUJSON renders a unit: a whole GPU, a GPU split into MIG instances
// (split, not bookable whole) or one of its instances (parent_id).
func toGPUJSON(g models.GPU) api.GPU {
	out := api.GPU{ID: g.ID, NodeID: g.NodeID, Node: g.NodeName, Index: g.Index, UUID: g.UUID, Model: g.Model,
		MemoryMiB: g.MemoryMiB, InService: g.InService, MIGProfile: g.MIGProfile, Weight: 1, Split: g.IsMIGParent()}
	if g.IsMIGInstance() {
		parent := g.ParentID
		out.ParentID, out.Weight = &parent, g.Weight
	}
	if g.IsMIGInstance() || g.IsMIGParent() {
		out.MIGSlices = g.MIGSlices
	}
	return out
}

// toBookingJSON renders b; uuids maps GPU IDs to their UUIDs, which go in
// gpu_uuids in the order of gpu_ids, so that a script can set
// CUDA_VISIBLE_DEVICES from the answer (the agent sets UUIDs, never indices).
func toBookingJSON(b *models.Booking, now time.Time, uuids map[int64]string) api.Booking {
	ids := idList(b.GPUIDs)
	us := make([]string, len(ids))
	for i, id := range ids {
		us[i] = uuids[id]
	}
	return api.Booking{ID: b.ID, UserID: b.UserID, UserName: b.UserName, NodeID: b.NodeID, Node: b.NodeName, GPUIDs: ids, GPUUUIDs: us,
		StartsAt: b.StartsAt.UTC(), EndsAt: b.EndsAt.UTC(), Note: b.Note, Kind: b.Kind, Status: b.Status,
		Phase: string(b.Phase(now)), ReleasedAt: utcPtr(b.ReleasedAt), CreatedAt: b.CreatedAt.UTC(), UpdatedAt: b.UpdatedAt.UTC()}
}

// gpuUUIDs maps the GPUs of the bookings of one answer to their UUIDs
// (it read every GPU of the cluster: a tenth of a booking's time). A
// booking the store read or wrote alone carries its UUIDs already
// (Booking.GPUUUIDs): those cost no query.
func (h *API) gpuUUIDs(ctx context.Context, bookings ...models.Booking) (map[int64]string, error) {
	uuids := map[int64]string{}
	var ids []int64
	for _, b := range bookings {
		carried := len(b.GPUUUIDs) == len(b.GPUIDs)
		for i, id := range b.GPUIDs {
			if _, ok := uuids[id]; ok {
				continue
			}
			if carried {
				uuids[id] = b.GPUUUIDs[i]
				continue
			}
			uuids[id] = ""
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return uuids, nil
	}
	gpus, err := h.Store.GPUsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	for id, g := range gpus {
		uuids[id] = g.UUID
	}
	return uuids, nil
}

// utcPtr is an optional time in UTC, as every time on the wire is.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// idList is a list of IDs that is [] on the wire when empty, never null.
func idList(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

func toSlotJSON(s models.Slot) api.Slot {
	return api.Slot{NodeID: s.NodeID, Node: s.NodeName, Model: s.Model, GPUIDs: s.GPUIDs, StartsAt: s.StartsAt.UTC(), EndsAt: s.EndsAt.UTC()}
}

// readAPIBody reads at most MaxAPIBody+1 bytes, so that the parser can tell
// an oversized body from a full one without reading all of it.
func readAPIBody(c echo.Context) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(c.Request().Body, MaxAPIBody+1))
	if err != nil {
		return nil, models.NewError(models.EINVALID, models.M("err.bad_request"))
	}
	// JSON is UTF-8 (RFC 8259); encoding/json would quietly store U+FFFD
	// for every bad byte, so a body that is not UTF-8 is refused instead.
	if !utf8.Valid(b) {
		return nil, models.FieldErrors{"body": models.M("err.text_invalid")}.Err()
	}
	return b, nil
}

// apiUser is the token's user; tokenAuth guarantees one.
func apiUser(c echo.Context) (*models.User, error) {
	u := models.UserFromContext(c.Request().Context())
	if u == nil {
		return nil, models.NewError(models.EUNAUTHORIZED, models.M("err.token_invalid"))
	}
	return u, nil
}
