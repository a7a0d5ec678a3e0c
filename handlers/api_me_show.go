package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models/api"
)

// ShowMe answers GET /api/v1/me: who the token belongs to, so that a script
// can check its token before it books.
func (h *API) ShowMe(c echo.Context) error {
	u, err := apiUser(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.Me{ID: u.ID, Email: u.Email, Name: u.Name, Language: u.Language, TimeZone: u.TimeZone, IsAdmin: u.IsAdmin})
}
