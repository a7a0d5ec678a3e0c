package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/views"
)

// Admin serves the admin pages. The routes put every one of them behind
// requireAdmin; the handlers do not check again.
type Admin struct {
	*Base
	// UnixClaimSet says the IdP sets users' Unix logins at each sign-in, so
	// the user page warns that an admin's value lasts until the next one.
	UnixClaimSet bool
	// BaseURL makes the links in the emails to holders of bookings on a
	// GPU taken out of service.
	BaseURL string
}

// Index shows the admin start page with counts.
func (h *Admin) Index(c echo.Context) error {
	ctx := c.Request().Context()
	gpus, err := h.Store.GPUs(ctx)
	if err != nil {
		return err
	}
	users, err := h.Store.Users(ctx)
	if err != nil {
		return err
	}
	teams, err := h.Store.Teams(ctx)
	if err != nil {
		return err
	}
	v := views.AdminIndexView{GPUs: len(gpus), Users: len(users), Teams: len(teams)}
	nodes := map[int64]bool{}
	for _, g := range gpus {
		nodes[g.NodeID] = true
		if !g.InService {
			v.OutOfService++
		}
	}
	v.Nodes = len(nodes)
	if v.Unconfirmed, err = h.Store.UnconfirmedMail(ctx, unconfirmedShown); err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.AdminIndexPage(h.NewPage(c), v))
}
