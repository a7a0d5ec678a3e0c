package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// GPUs serves the page of one GPU.
type GPUs struct{ *Base }

// Show answers "who has this GPU now, and who next?".
func (h *GPUs) Show(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	g, err := h.Store.GPU(ctx, id)
	if err != nil {
		return err
	}
	now := h.Now()
	bs, err := h.Store.Bookings(ctx, models.BookingFilter{GPUID: id, From: now, Limit: 100})
	if err != nil {
		return err
	}
	node, err := h.Store.Node(ctx, g.NodeID) // names an instance by its GPU, lists a split GPU's instances
	if err != nil {
		return err
	}
	v := views.GPUView{GPU: *g, NodeGPUs: node.GPUs}
	for i := range bs {
		switch bs[i].Phase(now) {
		case models.PhaseActive:
			v.Current = &bs[i]
		case models.PhaseUpcoming:
			v.Upcoming = append(v.Upcoming, bs[i])
		}
	}
	return Render(c, http.StatusOK, views.GPUPage(h.NewPage(c), v))
}
