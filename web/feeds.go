package web

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/gpubook/gpubook/models"
)

// feedPrefix is where the calendar feeds live; the rest of such a path is
// a secret.
const feedPrefix = "/feeds/"

// byFeedToken limits feed fetches per token (hashed, never kept in plain).
func byFeedToken(c echo.Context) (string, error) {
	sum := sha256.Sum256([]byte(c.Param("file")))
	return "feed:" + hex.EncodeToString(sum[:8]), nil
}

// limitFeedGuesses is limitAuthFailures for the feeds, whose refusal is a
// 404 rather than a 401: an address that asked for too many feeds that do
// not exist is refused with 429 before the next token is looked up.
func limitFeedGuesses(r Rate) echo.MiddlewareFunc {
	f := &authFailures{rate: rate.Limit(r.PerMinute / 60), burst: r.Burst, buckets: map[string]*failBucket{}}
	retry := retryAfter(r)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ip := c.RealIP()
			if f.blocked(ip) {
				c.Response().Header().Set("Retry-After", retry)
				return models.NewError(models.ETOOMANY, models.M("err.rate_limited"))
			}
			err := next(c)
			if models.ErrorCode(err) == models.ENOTFOUND {
				f.fail(ip)
			}
			return err
		}
	}
}

// logPath is a request path as the logs may keep it: a feed's token is a
// credential, so it is cut off.
func logPath(p string) string {
	if strings.HasPrefix(p, feedPrefix) {
		return feedPrefix + "…"
	}
	return p
}
