package web

import (
	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// browserZoneCookie carries the browser's time zone; static/js/app.js sets
// it on every page, the sign-in page included, so that a new user's first
// page after signing in is already in their zone.
const browserZoneCookie = "gpubook_tz"

// browserZone gives a user who never chose a zone the browser's, from the
// cookie; without JavaScript there is none and the cluster's zone stays,
// with the profile's field to choose another.
func browserZone(c echo.Context, u *models.User) {
	if u.TimeZone != "" {
		return
	}
	if ck, err := c.Cookie(browserZoneCookie); err == nil {
		u.BrowserZone = models.BrowserZone(ck.Value)
	}
}
