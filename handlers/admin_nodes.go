package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Nodes lists nodes and their GPUs.
func (h *Admin) Nodes(c echo.Context) error {
	return h.renderNodes(c, http.StatusOK, views.AdminNodesView{Form: views.NodeForm{GPUs: "8"}})
}

func (h *Admin) renderNodes(c echo.Context, status int, v views.AdminNodesView) error {
	nodes, err := h.Store.Nodes(c.Request().Context())
	if err != nil {
		return err
	}
	v.Nodes = nodes
	return Render(c, status, views.AdminNodesPage(h.NewPage(c), v))
}

// CreateNode registers a node and its GPUs by hand.
func (h *Admin) CreateNode(c echo.Context) error {
	f := views.NodeForm{Name: c.FormValue("name"), GPUs: c.FormValue("gpus"), Model: c.FormValue("model"), MemoryMiB: c.FormValue("memory_mib")}
	fe := models.FieldErrors{}
	count := formInt(f.GPUs, "gpus", fe)
	mem := formInt(f.MemoryMiB, "memory_mib", fe)
	node := &models.Node{Name: f.Name}
	if err := node.Validate(); err != nil {
		mergeFields(fe, err)
	}
	var gpus []models.GPU
	if len(fe) == 0 {
		var err error
		if gpus, err = models.NewNodeGPUs(node.Name, int(count), f.Model, mem); err != nil {
			mergeFields(fe, err)
		}
	}
	err := fe.Err()
	if err == nil {
		err = h.Store.CreateNode(c.Request().Context(), node, gpus, Actor(c))
	}
	if code := models.ErrorCode(err); code == models.EINVALID || code == models.ECONFLICT {
		t := h.Translator(c)
		errs := t.Fields(err)
		if code == models.ECONFLICT {
			errs = map[string]string{"name": t.Err(err)}
		}
		return h.renderNodes(c, http.StatusUnprocessableEntity, views.AdminNodesView{Form: f, Errors: errs})
	}
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("admin.node_added", "Name", node.Name, "Count", len(gpus)))
	return RedirectSeeOther(c, "/admin/nodes")
}

// RenameNode changes a node's name.
func (h *Admin) RenameNode(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	err = h.Store.RenameNode(c.Request().Context(), id, c.FormValue("name"), Actor(c))
	if code := models.ErrorCode(err); code == models.EINVALID || code == models.ECONFLICT {
		t := h.Translator(c)
		msg := t.Err(err)
		if f := t.Fields(err); f["name"] != "" {
			msg = f["name"]
		}
		return h.renderNodes(c, http.StatusUnprocessableEntity, views.AdminNodesView{ErrorFor: "node-" + itoa64(id), Errors: map[string]string{"name": msg}})
	}
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/admin/nodes")
}

// SetGPUService takes a GPU out of service with a reason, or back in.
// Taking it out while bookings remain on it goes through a confirmation
// page (serviceWithCare) instead of keeping them silently.
func (h *Admin) SetGPUService(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	in, perr := strconv.ParseBool(c.FormValue("in_service"))
	if perr != nil {
		return models.NewError(models.EINVALID, models.M("err.bad_request"))
	}
	reason := c.FormValue("reason")
	if !in {
		if verr := models.ValidateServiceReason(&reason); verr != nil {
			return h.renderNodes(c, http.StatusUnprocessableEntity, views.AdminNodesView{ErrorFor: "gpu-" + itoa64(id), Errors: h.Translator(c).Fields(verr)})
		}
		return h.serviceWithCare(c, id, reason)
	}
	if err := h.Store.SetGPUService(c.Request().Context(), id, true, "", Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/admin/nodes")
}

// formInt parses a whole number from a form, noting a problem under field.
func formInt(s, field string, fe models.FieldErrors) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		fe.Add(field, models.M("err.number_invalid"))
	}
	return n
}

// mergeFields copies an EINVALID error's field problems into fe.
func mergeFields(fe models.FieldErrors, err error) {
	for k, v := range models.AsError(err).Fields {
		fe.Add(k, v)
	}
}
