package web

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"
)

// staticFiles serves the embedded assets. A directory answers 404 rather
// than http.FileServer's listing: the listing helps nobody but a scanner.
func staticFiles(fsys fs.FS) echo.HandlerFunc {
	files := http.StripPrefix("/static/", http.FileServerFS(fsys))
	return func(c echo.Context) error {
		name := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(c.Request().URL.Path, "/static/")), "/")
		if name == "" {
			return echo.ErrNotFound
		}
		if st, err := fs.Stat(fsys, name); err != nil || st.IsDir() {
			return echo.ErrNotFound
		}
		files.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}
