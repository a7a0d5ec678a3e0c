package handlers

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDoc is the contract of /api/v1 (OpenAPI 3.1), generated from the
// types of models/api that the handlers answer with (go generate writes it;
// TestOpenAPIGenerated fails while it is stale). web's tests fail when a
// route or a status of the router and the document disagree.
//
//go:generate go run ../models/api/openapigen openapi.json
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
