package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// Health answers the load balancer's and the orchestrator's probes.
type Health struct{ *Base }

// Live says the process is up; it touches nothing else.
func (h *Health) Live(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// Ready says whether this replica can serve: the database must answer.
func (h *Health) Ready(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := h.Store.Ping(ctx); err != nil {
		slog.WarnContext(ctx, "readyz: database unreachable", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": "database unreachable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}
