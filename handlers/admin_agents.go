package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// AdminAgents serves the admin pages about node agents: their state,
// enrolment, and everyone's violations. The routes put them behind requireAdmin.
type AdminAgents struct {
	*Base
	PortalURL string // for the install command; "" = the URL the admin uses
}

// Agents lists every node with its agent's state.
func (h *AdminAgents) Agents(c echo.Context) error {
	nodes, err := h.Store.AgentNodes(c.Request().Context())
	if err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.AdminAgentsPage(h.NewPage(c), views.AdminAgentsView{Nodes: nodes}))
}

// ShowEnroll shows a node's agent state and the button that creates a token.
func (h *AdminAgents) ShowEnroll(c echo.Context) error {
	n, err := h.agentNode(c)
	if err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.AdminEnrollPage(h.NewPage(c), views.AdminEnrollView{Node: *n}))
}

// CreateEnrollToken makes a one-time token and shows it, once, with the
// install command. It answers the POST directly instead of redirecting,
// so that the token never sits in a session or a URL.
func (h *AdminAgents) CreateEnrollToken(c echo.Context) error {
	n, err := h.agentNode(c)
	if err != nil {
		return err
	}
	plain, expires, err := h.Store.CreateEnrollToken(c.Request().Context(), n.NodeID, h.Now(), Actor(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	v := views.AdminEnrollView{Node: *n, Token: plain, ExpiresAt: expires, PortalURL: h.portalURL(c)}
	return Render(c, http.StatusOK, views.AdminEnrollPage(h.NewPage(c), v))
}

// Violations lists everyone's violations and idle reports.
func (h *AdminAgents) Violations(c echo.Context) error {
	ctx := c.Request().Context()
	vs, err := h.Store.Violations(ctx, models.ViolationFilter{Limit: 500})
	if err != nil {
		return err
	}
	idle, err := h.Store.IdleReports(ctx, models.IdleFilter{Limit: 500})
	if err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.ViolationsPage(h.NewPage(c), views.ViolationsView{Admin: true, Violations: vs, Idle: idle}))
}

func (h *AdminAgents) agentNode(c echo.Context) (*models.AgentNode, error) {
	id, err := PathID(c, "id")
	if err != nil {
		return nil, err
	}
	return h.Store.AgentNode(c.Request().Context(), id)
}

func (h *AdminAgents) portalURL(c echo.Context) string { return PortalURL(c, h.PortalURL) }
