package web

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"github.com/gpubook/gpubook/models"
)

// byIP limits per client address.
func byIP(c echo.Context) (string, error) { return "ip:" + c.RealIP(), nil }

// byUser limits per signed-in user (the routes it guards require one).
func byUser(c echo.Context) (string, error) {
	if u := models.UserFromContext(c.Request().Context()); u != nil {
		return "user:" + strconv.FormatInt(u.ID, 10), nil
	}
	return byIP(c)
}

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
	return rateLimitWith(r, key, models.M("err.rate_limited"))
}

// rateLimitWith is rateLimit that answers with msg.
func rateLimitWith(r Rate, key middleware.Extractor, msg models.Msg) echo.MiddlewareFunc {
	perSecond := rate.Limit(r.PerMinute / 60)
	retry := retryAfter(r)
	deny := func(c echo.Context, _ string, _ error) error {
		c.Response().Header().Set("Retry-After", retry)
		return models.NewError(models.ETOOMANY, msg)
	}
	return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store: middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
			Rate: perSecond, Burst: r.Burst, ExpiresIn: 10 * time.Minute}),
		IdentifierExtractor: key,
		DenyHandler:         deny,
		ErrorHandler:        func(c echo.Context, err error) error { return deny(c, "", err) },
	})
}

// retryAfter is the Retry-After header for r: the seconds until one more
// call is allowed.
func retryAfter(r Rate) string {
	return strconv.Itoa(max(1, int((time.Minute/time.Duration(max(r.PerMinute, 1))).Seconds()+0.999)))
}

// limitAuthFailures refuses a client address with 429 once it has failed
// authentication more than r allows, before the credential is looked up:
// random tokens would otherwise cost one database lookup each, and a limit
// per token does not hold them back because each guess is a new token.
// Successful calls cost nothing here. failed is the error code that counts
// as a failed guess: EUNAUTHORIZED for tokens, ENOTFOUND for the calendar
// feeds, whose unknown token is a 404.
func limitAuthFailures(r Rate, failed string) echo.MiddlewareFunc {
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
			if models.ErrorCode(err) == failed {
				f.fail(ip)
			}
			return err
		}
	}
}

// authFailures is a token bucket per client address that only failures
// drain. Addresses quiet for ten minutes are forgotten.
type authFailures struct {
	mu      sync.Mutex
	rate    rate.Limit
	burst   int
	buckets map[string]*failBucket
	swept   time.Time
}

type failBucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func (f *authFailures) blocked(ip string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.buckets[ip]
	return b != nil && b.lim.Tokens() < 1
}

func (f *authFailures) fail(ip string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if now.Sub(f.swept) > time.Minute {
		for k, b := range f.buckets {
			if now.Sub(b.seen) > 10*time.Minute {
				delete(f.buckets, k)
			}
		}
		f.swept = now
	}
	b := f.buckets[ip]
	if b == nil {
		b = &failBucket{lim: rate.NewLimiter(f.rate, f.burst)}
		f.buckets[ip] = b
	}
	b.lim.AllowN(now, 1)
	b.seen = now
}
