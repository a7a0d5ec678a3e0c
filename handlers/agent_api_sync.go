package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// Enroll exchanges a one-time token for the node credential (no credential yet).
func (h *AgentAPI) Enroll(c echo.Context) error {
	var req wire.EnrollRequest
	if err := decodeAgent(c, &req, flatShape, wire.MaxEnrollBody); err != nil {
		return err
	}
	if !req.UsableEnrollToken() {
		return models.ErrEnrollToken()
	}
	resp, err := h.Store.Enroll(c.Request().Context(), req, h.Now())
	if err != nil {
		return err
	}
	h.logger().Info("agent enrolled", "node", resp.NodeName, "node_id", resp.NodeID, "hostname", req.Hostname, "agent_version", req.AgentVersion)
	return c.JSON(http.StatusOK, resp)
}

// Inventory makes the node's GPUs match the agent's report.
func (h *AgentAPI) Inventory(c echo.Context) error {
	var inv wire.Inventory
	if err := decodeAgent(c, &inv, inventoryShape, wire.MaxBody); err != nil {
		return err
	}
	res, err := h.Store.ApplyInventory(c.Request().Context(), h.node(c), inv, h.Now())
	if err != nil {
		return err
	}
	if res.Added+res.Replaced+res.Missing > 0 {
		h.logger().Info("agent inventory changed GPUs", "node_id", h.node(c), "added", res.Added, "replaced", res.Replaced, "missing", res.Missing)
	}
	return c.NoContent(http.StatusNoContent)
}

// Schedule returns the node's bookings for the next 24 h, or 304 when the
// agent's copy (If-None-Match) is current.
func (h *AgentAPI) Schedule(c echo.Context) error {
	s, etag, err := h.Store.AgentSchedule(c.Request().Context(), h.node(c), h.Now())
	if err != nil {
		return err
	}
	hdr := c.Response().Header()
	hdr.Set("ETag", etag)
	hdr.Set("Cache-Control", "private, no-cache")
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	s.PortalURL = PortalURL(c, h.PortalURL)
	return c.JSON(http.StatusOK, s)
}

// etagMatches implements If-None-Match's list and weak comparison.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// Heartbeat notes that the agent is alive and how far behind it is.
func (h *AgentAPI) Heartbeat(c echo.Context) error {
	var hb wire.Heartbeat
	if err := decodeAgent(c, &hb, flatShape, wire.MaxBody); err != nil {
		return err
	}
	if err := h.Store.RecordHeartbeat(c.Request().Context(), h.node(c), hb, h.Now()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
