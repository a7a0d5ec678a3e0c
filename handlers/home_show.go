package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/views"
)

// Pages serves pages that belong to no resource.
type Pages struct{ *Base }

// Home shows the start page.
func (h *Pages) Home(c echo.Context) error {
	v := views.HomeView{}
	if p := h.NewPage(c); p.User != nil {
		gpus, err := h.Store.GPUs(c.Request().Context())
		if err != nil {
			return err
		}
		nodes := map[int64]bool{}
		for _, g := range gpus {
			nodes[g.NodeID] = true
		}
		v.GPUs, v.Nodes = len(gpus), len(nodes)
		return Render(c, http.StatusOK, views.HomePage(p, v))
	}
	return Render(c, http.StatusOK, views.HomePage(h.NewPage(c), v))
}
