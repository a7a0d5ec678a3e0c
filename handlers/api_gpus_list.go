package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models/api"
)

// ListGPUs answers GET /api/v1/gpus: every GPU, by node name and index.
func (h *API) ListGPUs(c echo.Context) error {
	gpus, err := h.Store.GPUs(c.Request().Context())
	if err != nil {
		return err
	}
	out := api.GPUList{GPUs: make([]api.GPU, len(gpus))}
	for i, g := range gpus {
		out.GPUs[i] = toGPUJSON(g)
	}
	return c.JSON(http.StatusOK, out)
}
