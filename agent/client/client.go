// Package client talks to the portal's agent API (wire.APIPrefix)
// with the node credential as a bearer token. It retries transient failures
// with exponential backoff and full jitter; the clock, the sleep and the
// random source are injectable so tests run retries in zero time.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Client is a portal client for one node.
type Client struct {
	BaseURL    string // https://gpubook.example.org
	Credential string // empty only for enrolment
	UserAgent  string
	HTTP       *http.Client

	Attempts  int           // tries per request, ≥ 1
	BaseDelay time.Duration // first backoff
	MaxDelay  time.Duration // backoff cap
	Now       func() time.Time
	Sleep     func(ctx context.Context, d time.Duration) error
	Rand      func() float64 // in [0, 1)
}

// New returns a Client with production defaults: 10 s per request, 4 tries,
// backoff 1 s doubling up to 30 s.
func New(baseURL, credential, userAgent string) *Client {
	return &Client{
		BaseURL: strings.TrimRight(baseURL, "/"), Credential: credential, UserAgent: userAgent,
		HTTP: &http.Client{Timeout: 10 * time.Second}, Attempts: 4, BaseDelay: time.Second, MaxDelay: 30 * time.Second,
		Now: time.Now, Sleep: sleepCtx, Rand: rand.Float64,
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// StatusError is a non-2xx answer from the portal.
type StatusError struct {
	Method, Path string
	Code         int
	Body         string
	RetryAfter   time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("agent: client: %s %s: %d %s", e.Method, e.Path, e.Code, e.Message())
}

// Message is what the portal said, for people: the message (and field
// errors) of its JSON error body, or the raw body when it is not one (a
// proxy's page).
func (e *StatusError) Message() string {
	var body struct {
		Error struct {
			Message string            `json:"message"`
			Fields  map[string]string `json:"fields"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(e.Body), &body) != nil || body.Error.Message == "" {
		return strings.TrimSpace(e.Body)
	}
	msg := body.Error.Message
	keys := make([]string, 0, len(body.Error.Fields))
	for k := range body.Error.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		msg += "; " + k + ": " + body.Error.Fields[k]
	}
	return msg
}

// Invalid reports whether the portal refused the body itself (400, 422
// with its validation error): the only answer for which the spool may set
// an entry aside. A 401, 403 or 404 says nothing about the data (a node
// being re-enrolled, a restored database, a proxy in maintenance), so such
// an entry waits and is sent again.
func Invalid(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	return se.Code == http.StatusBadRequest || se.Code == http.StatusUnprocessableEntity
}

// Permanent reports whether err is a refusal that resending at once cannot
// fix (a 4xx other than 408 and 429): the client stops its quick retries.
// It does not mean the data is bad; see Invalid.
func Permanent(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	return se.Code >= 400 && se.Code < 500 && se.Code != http.StatusRequestTimeout && se.Code != http.StatusTooManyRequests
}

// backoff returns the delay before try n (0-based retry count): full jitter
// over min(MaxDelay, BaseDelay·2ⁿ), so that a fleet of agents coming back
// after an outage does not hit the portal in lockstep.
func (c *Client) backoff(n int) time.Duration {
	d := c.BaseDelay << min(n, 30)
	if d <= 0 || d > c.MaxDelay {
		d = c.MaxDelay
	}
	return time.Duration(c.Rand() * float64(d))
}

// do sends one request with retries. body is re-sent from bytes each try.
func (c *Client) do(ctx context.Context, method, path string, body []byte, hdr http.Header) (*http.Response, []byte, error) {
	var lastErr error
	for try := 0; try < max(c.Attempts, 1); try++ {
		if try > 0 {
			d := c.backoff(try - 1)
			var se *StatusError
			if errors.As(lastErr, &se) && se.RetryAfter > d {
				d = min(se.RetryAfter, c.MaxDelay)
			}
			if err := c.Sleep(ctx, d); err != nil {
				return nil, nil, fmt.Errorf("agent: client: %s %s: %w", method, path, err)
			}
		}
		resp, data, err := c.once(ctx, method, path, body, hdr)
		if err == nil {
			return resp, data, nil
		}
		lastErr = err
		if Permanent(err) || ctx.Err() != nil {
			break
		}
	}
	return nil, nil, lastErr
}

func (c *Client) once(ctx context.Context, method, path string, body []byte, hdr http.Header) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("agent: client: %w", err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Credential != "" {
		req.Header.Set("Authorization", "Bearer "+c.Credential)
	}
	req.Header.Set("User-Agent", c.UserAgent)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("agent: client: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("agent: client: %s %s: read: %w", method, path, err)
	}
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotModified {
		se := &StatusError{Method: method, Path: path, Code: resp.StatusCode, Body: string(data[:min(len(data), 512)])}
		se.RetryAfter = c.retryAfter(resp.Header.Get("Retry-After"))
		return nil, nil, se
	}
	return resp, data, nil
}

// retryAfter parses Retry-After as seconds or as an HTTP date.
func (c *Client) retryAfter(v string) time.Duration {
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(c.Now()), 0)
	}
	return 0
}

// PostJSON sends v as JSON to path (usage, violations, idle, heartbeat).
func (c *Client) PostJSON(ctx context.Context, path string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("agent: client: encode: %w", err)
	}
	return c.PostRaw(ctx, path, body)
}

// PostRaw sends an already-encoded body, as the spool stores it.
func (c *Client) PostRaw(ctx context.Context, path string, body []byte) error {
	_, _, err := c.do(ctx, http.MethodPost, path, body, nil)
	return err
}
