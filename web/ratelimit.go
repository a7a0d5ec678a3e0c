package web

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"github.com/gpubook/gpubook/models"
)

// byIP limits per client address.
func byIP(c echo.Context) (string, error) { return "ip:" + c.RealIP(), nil }

// byTokenOrIP limits API calls per token (hashed, never kept in plain) and
// falls back to the address for calls without one.
func byTokenOrIP(c echo.Context) (string, error) {
	if tok, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer "); ok && tok != "" {
		sum := sha256.Sum256([]byte(tok))
		return "tok:" + hex.EncodeToString(sum[:8]), nil
	}
	return byIP(c)
}

// rateLimit refuses callers over r with 429 and a Retry-After header. The
// buckets live in this process: with several replicas each enforces its own.
func rateLimit(r Rate, key middleware.Extractor) echo.MiddlewareFunc {
	perSecond := rate.Limit(r.PerMinute / 60)
	retry := strconv.Itoa(max(1, int((time.Minute/time.Duration(max(r.PerMinute, 1))).Seconds()+0.999)))
	deny := func(c echo.Context, _ string, _ error) error {
		c.Response().Header().Set("Retry-After", retry)
		return models.NewError(models.ETOOMANY, models.M("err.rate_limited"))
	}
	return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store: middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
			Rate: perSecond, Burst: r.Burst, ExpiresIn: 10 * time.Minute}),
		IdentifierExtractor: key,
		DenyHandler:         deny,
		ErrorHandler:        func(c echo.Context, err error) error { return deny(c, "", err) },
	})
}
