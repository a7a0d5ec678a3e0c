package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gpubook/gpubook/views/i18n"
)

// apiClient talks to a portal's /api/v1 with a personal token. The client
// commands use it and nothing else: they never open a database, so they
// run on any machine that can reach the portal.
type apiClient struct {
	base  string // the portal's URL, without a trailing slash
	token string
	http  *http.Client
	zone  *time.Location   // the user's, once userZone has asked; for refusals' times
	tr    *i18n.Translator // names a refusal's policy rules in words; nil: their keys
}

// apiError is a refusal from the portal, in the shape every /api/v1
// error has (docs/api.md, the Error schema of /api/v1/openapi.json).
type apiError struct {
	Status    int
	zone      *time.Location // the user's, for the conflicts' times; nil: UTC
	tr        *i18n.Translator
	Code      string            `json:"code"`
	Message   string            `json:"message"`
	Fields    map[string]string `json:"fields"`
	Conflicts []apiConflict     `json:"conflicts"`
}

type apiConflict struct {
	GPUIndex int       `json:"gpu_index"`
	UserName string    `json:"user_name"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
}

// Error is one line: the code, the message and every field or policy rule
// that was broken, so that a script's log says why without a second call.
func (e *apiError) Error() string {
	var b strings.Builder
	// Line breaks in the portal's texts become spaces before any other
	// control character is escaped: the error stays one readable line.
	line := func(s string) string { return show(strings.Join(strings.Fields(s), " ")) }
	fmt.Fprintf(&b, "refused (%s): %s", line(e.Code), line(e.Message))
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s: %s", line(fieldWords(e.tr, k)), line(e.Fields[k]))
	}
	zone := e.zone
	if zone == nil {
		zone = time.UTC
	}
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, " [GPU %d held by %s %s – %s]", c.GPUIndex, show(c.UserName), showTime(c.StartsAt, zone), showTime(c.EndsAt, zone))
	}
	if e.Status == http.StatusUnauthorized {
		b.WriteString(" Your token is revoked, expired or wrong: run 'gpubook login' with a new one (Profile → API tokens).")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// call sends method path?query with body (JSON when not nil) and decodes a
// 2xx answer into out; anything else becomes an *apiError.
func (a *apiClient) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := a.base + "/api/v1" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return fmt.Errorf("portal: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("portal %s: %w", a.base, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("portal: read answer: %w", err)
	}
	if res.StatusCode/100 != 2 {
		var e struct{ Error apiError }
		if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
			return fmt.Errorf("portal: %s %s answered %s", method, path, show(res.Status))
		}
		e.Error.Status, e.Error.zone, e.Error.tr = res.StatusCode, a.zone, a.tr
		return &e.Error
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = data
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("portal: %s %s: %w", method, path, err)
	}
	return nil
}

// isRefusal reports an answer of the portal's (not a network error).
func isRefusal(err error, code string) bool {
	var e *apiError
	return errors.As(err, &e) && (code == "" || e.Code == code)
}

// Wire types of the calls the client makes (the document's schemas).
type apiGPU struct {
	ID        int64  `json:"id"`
	NodeID    int64  `json:"node_id"`
	Node      string `json:"node"`
	Index     int    `json:"index"`
	UUID      string `json:"uuid"`
	Model     string `json:"model"`
	MemoryMiB int64  `json:"memory_mib"`
	InService bool   `json:"in_service"`
}

type apiBooking struct {
	ID         int64      `json:"id"`
	UserID     int64      `json:"user_id"`
	UserName   string     `json:"user_name"`
	Node       string     `json:"node"`
	GPUIDs     []int64    `json:"gpu_ids"`
	GPUUUIDs   []string   `json:"gpu_uuids"`
	StartsAt   time.Time  `json:"starts_at"`
	EndsAt     time.Time  `json:"ends_at"`
	Note       string     `json:"note"`
	Kind       string     `json:"kind"`
	Status     string     `json:"status"`
	Phase      string     `json:"phase"`
	ReleasedAt *time.Time `json:"released_at"`
}

type apiSlot struct {
	Node     string    `json:"node"`
	Model    string    `json:"model"`
	GPUIDs   []int64   `json:"gpu_ids"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
}

type apiMe struct {
	ID       int64  `json:"id"`
	Email    string `json:"email"`
	Name     string `json:"name"`
	TimeZone string `json:"time_zone"`
}

func (a *apiClient) gpus(ctx context.Context) ([]apiGPU, error) {
	var out struct{ GPUs []apiGPU }
	return out.GPUs, a.call(ctx, http.MethodGet, "/gpus", nil, nil, &out)
}

// bookings lists the bookings overlapping [from, to); mine keeps only the token user's.
func (a *apiClient) bookings(ctx context.Context, from, to time.Time, mine bool) ([]apiBooking, error) {
	q := url.Values{"from": {from.UTC().Format(time.RFC3339)}, "to": {to.UTC().Format(time.RFC3339)}}
	if mine {
		q.Set("mine", "true")
	}
	var out struct{ Bookings []apiBooking }
	return out.Bookings, a.call(ctx, http.MethodGet, "/bookings", q, nil, &out)
}

func (a *apiClient) slots(ctx context.Context, n int, d time.Duration, model, node string, after time.Time) ([]apiSlot, error) {
	q := url.Values{"gpus": {fmt.Sprint(n)}, "hours": {fmt.Sprint(d.Hours())}}
	if model != "" {
		q.Set("model", model)
	}
	if node != "" {
		q.Set("node", node)
	}
	if !after.IsZero() {
		q.Set("after", after.UTC().Format(time.RFC3339))
	}
	var out struct{ Slots []apiSlot }
	return out.Slots, a.call(ctx, http.MethodGet, "/slots", q, nil, &out)
}
