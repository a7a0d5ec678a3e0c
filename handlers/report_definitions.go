package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/docs"
)

// Definitions serves docs/reports.md (/usage/definitions): every report
// page and email links here, so the words behind each figure are the ones
// the code follows, not a paraphrase of them.
func (h *Reports) Definitions(c echo.Context) error {
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", docs.Reports)
}
