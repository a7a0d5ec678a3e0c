package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/views"
)

// confirmed reports whether the form says confirm=yes; when it does not,
// it renders the question instead (the no-JavaScript confirmation the
// booking list's cancel and release already have), and the caller returns
// err. Look the thing up before: a missing one stays a 404, not a question.
func (b *Base) confirmed(c echo.Context, v views.ConfirmView) (bool, error) {
	if c.FormValue("confirm") == "yes" {
		return true, nil
	}
	v.Action = c.Request().URL.Path
	return false, Render(c, http.StatusOK, views.ConfirmPage(b.NewPage(c), v))
}
