package web

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/labstack/echo/v4"
)

// feedPrefix is where the calendar feeds live; the rest of such a path is
// a secret.
const feedPrefix = "/feeds/"

// byFeedToken limits feed fetches per token (hashed, never kept in plain).
func byFeedToken(c echo.Context) (string, error) {
	sum := sha256.Sum256([]byte(c.Param("file")))
	return "feed:" + hex.EncodeToString(sum[:8]), nil
}

// logPath is a request path as the logs may keep it: a feed's token is a
// credential, so it is cut off.
func logPath(p string) string {
	if strings.HasPrefix(p, feedPrefix) {
		return feedPrefix + "…"
	}
	return p
}
