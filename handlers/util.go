package handlers

import (
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

func itoa64(i int64) string { return strconv.FormatInt(i, 10) }

// PortalURL is the portal's address for links that leave it (feeds,
// emails): the configured base URL, else the one this request came to.
func PortalURL(c echo.Context, configured string) string {
	if configured != "" {
		return strings.TrimSuffix(configured, "/")
	}
	return c.Scheme() + "://" + c.Request().Host
}
