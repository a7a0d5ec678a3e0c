package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// ListGPUs answers GET /api/v1/gpus: every GPU, by node name and index.
func (h *API) ListGPUs(c echo.Context) error {
	gpus, err := h.Store.GPUs(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]gpuJSON, len(gpus))
	for i, g := range gpus {
		out[i] = toGPUJSON(g)
	}
	return c.JSON(http.StatusOK, map[string][]gpuJSON{"gpus": out})
}
