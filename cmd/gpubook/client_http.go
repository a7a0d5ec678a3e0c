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

	v1 "github.com/gpubook/gpubook/models/api"
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

// apiError is a refusal from the portal: the detail every /api/v1 error
// carries (models/api), with the status and what shows it to the user.
type apiError struct {
	v1.ErrorDetail
	Status int
	zone   *time.Location // the user's, for the conflicts' times; nil: UTC
	tr     *i18n.Translator
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
		// gpu_name names a MIG slice by its GPU and profile; a portal
		// older than it sends only the index.
		name := c.GPUName
		if name == "" {
			name = fmt.Sprintf("GPU %d", c.GPUIndex)
		}
		fmt.Fprintf(&b, " [%s held by %s %s – %s]", line(name), show(c.UserName), showTime(c.StartsAt, zone), showTime(c.EndsAt, zone))
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
		var e struct {
			Error apiError `json:"error"`
		}
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

func (a *apiClient) gpus(ctx context.Context) ([]v1.GPU, error) {
	var out v1.GPUList
	return out.GPUs, a.call(ctx, http.MethodGet, v1.PathGPUs, nil, nil, &out)
}

// bookings lists the bookings overlapping [from, to); mine keeps only the token user's.
func (a *apiClient) bookings(ctx context.Context, from, to time.Time, mine bool) ([]v1.Booking, error) {
	var out v1.BookingList
	q := v1.BookingsQuery{From: from, To: to, Mine: mine}
	return out.Bookings, a.call(ctx, http.MethodGet, v1.PathBookings, q.Values(), nil, &out)
}

// slots asks for n GPUs, or with a profile n MIG instances of it.
func (a *apiClient) slots(ctx context.Context, n int, d time.Duration, model, node, profile string, after time.Time) ([]v1.Slot, error) {
	var out v1.SlotList
	q := v1.SlotsQuery{GPUs: n, Hours: d.Hours(), Model: model, Node: node, Profile: profile, After: after}
	return out.Slots, a.call(ctx, http.MethodGet, v1.PathSlots, q.Values(), nil, &out)
}
