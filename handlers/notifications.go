package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Notifications serves the in-app notices: the list, the bell's count and
// marking them read.
type Notifications struct{ *Base }

// List shows the viewer's recent notices, newest first.
func (h *Notifications) List(c echo.Context) error {
	u := models.UserFromContext(c.Request().Context())
	items, err := h.Store.Notifications(c.Request().Context(), u.ID, models.NotificationPageSize)
	if err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.NotificationsPage(h.NewPage(c), views.NotificationsView{Items: items}))
}

// Count renders the bell alone, for htmx's periodic refresh.
func (h *Notifications) Count(c echo.Context) error {
	return Render(c, http.StatusOK, views.NotificationBell(h.NewPage(c), false))
}

// MarkRead marks one notice read: htmx gets the item and the bell, a
// plain form a redirect back to the list.
func (h *Notifications) MarkRead(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	if err := h.Store.MarkNotificationRead(ctx, u.ID, id, h.Now()); err != nil {
		return err
	}
	if !IsHTMX(c) {
		return RedirectSeeOther(c, "/notifications")
	}
	items, err := h.Store.Notifications(ctx, u.ID, models.NotificationPageSize)
	if err != nil {
		return err
	}
	p := h.NewPage(c)
	for _, n := range items {
		if n.ID == id {
			return Render(c, http.StatusOK, views.NotificationRead(p, n))
		}
	}
	return Render(c, http.StatusOK, views.NotificationBell(p, true))
}

// MarkAllRead marks every notice of the viewer read.
func (h *Notifications) MarkAllRead(c echo.Context) error {
	u := models.UserFromContext(c.Request().Context())
	n, err := h.Store.MarkAllNotificationsRead(c.Request().Context(), u.ID, h.Now())
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("notice.marked_all", "Count", n))
	return RedirectSeeOther(c, "/notifications")
}
