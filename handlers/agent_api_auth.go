package handlers

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// AgentAPI serves /api/agent/v1 to gpubook-agent. Every endpoint but
// enrolment runs behind Authenticate, and every store call takes the node
// the credential proved, so a node reads and writes only its own GPUs and
// bookings whatever its request body says.
type AgentAPI struct {
	*Base
	// PortalURL is sent in schedules for the login hint ("book at …");
	// "" means the URL the agent called.
	PortalURL  string
	IdlePolicy models.IdlePolicy
	Retention  time.Duration
	Log        *slog.Logger
	// IdleWarner sends the owner of an idle booking the warning email. It
	// is nil until the outbox exists: reports then stay un-warned
	// (warned_at NULL) so that the outbox job can pick them up later.
	IdleWarner func(ctx context.Context, r models.IdleReport) error
	// UsageIngested, when set, is told what each stored usage batch
	// added (the portal's metrics count it); nil: nobody listens.
	UsageIngested func(models.UsageResult)
}

type agentNodeKey struct{}

// AgentNodeFromContext returns the node Authenticate proved.
func AgentNodeFromContext(ctx context.Context) *models.AgentNode {
	n, _ := ctx.Value(agentNodeKey{}).(*models.AgentNode)
	return n
}

// Authenticate accepts only a node credential as a Bearer token; the
// session cookie is never looked at here.
func (h *AgentAPI) Authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		plain, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
		if !ok || strings.TrimSpace(plain) == "" {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="gpubook-agent"`)
			return models.ErrNodeCredential()
		}
		n, err := h.Store.NodeByCredential(c.Request().Context(), strings.TrimSpace(plain), h.Now())
		if err != nil {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="gpubook-agent", error="invalid_token"`)
			return err
		}
		c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), agentNodeKey{}, n)))
		return next(c)
	}
}

// node is the authenticated node of the request.
func (h *AgentAPI) node(c echo.Context) int64 {
	return AgentNodeFromContext(c.Request().Context()).NodeID
}

func (h *AgentAPI) logger() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Log
}

func (h *AgentAPI) retention() time.Duration {
	if h.Retention <= 0 {
		return models.DefaultUsageRetentionDays * 24 * time.Hour
	}
	return h.Retention
}
