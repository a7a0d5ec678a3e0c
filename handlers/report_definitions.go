package handlers

import (
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/docs"
	"github.com/gpubook/gpubook/views"
)

// definitionsHTML is docs/reports.md as HTML, converted once: the document
// is part of the binary.
var definitionsHTML = sync.OnceValues(func() (string, error) { return views.MarkdownHTML(docs.Reports) })

// Definitions shows docs/reports.md (/usage/definitions) as a page: every
// report page and email links here, so the words behind each figure are the
// ones the code follows, not a paraphrase of them.
func (h *Reports) Definitions(c echo.Context) error {
	html, err := definitionsHTML()
	if err != nil {
		return err
	}
	return Render(c, http.StatusOK, views.DefinitionsPage(h.NewPage(c), views.DefinitionsView{HTML: html}))
}
