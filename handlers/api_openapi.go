package handlers

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDoc is the contract of /api/v1 (OpenAPI 3.1). It is kept by hand
// next to the handlers it describes; web's tests fail when a route, a field
// or a status of the code and the document disagree.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPIDocument returns the embedded contract, for tests and tools that
// check against it.
func OpenAPIDocument() []byte { return openAPIDoc }

// OpenAPI answers GET /api/v1/openapi.json without a token: the contract
// holds nothing secret (the source is public too), and a client generator
// or a person should read it before they have a token.
func OpenAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDoc)
}
