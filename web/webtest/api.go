package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gpubook/gpubook/models"
)

// Token returns a fresh personal API token for u, as "gpubook token create" would.
func (e *Env) Token(u *models.User) string {
	e.T.Helper()
	_, plain, err := e.DB.CreateToken(context.Background(), u.ID, "test", time.Now(), models.CLIActor)
	if err != nil {
		e.T.Fatalf("create token: %v", err)
	}
	return plain
}

// APIClient is a script using the JSON API with a bearer token, through the
// wired router (so the error handler runs as in production).
type APIClient struct {
	env    *Env
	Token  string
	Header http.Header // sent with every request (e.g. Accept-Language)
}

// API returns a client that authenticates as u with a new token.
func (e *Env) API(u *models.User) *APIClient {
	e.T.Helper()
	return &APIClient{env: e, Token: e.Token(u), Header: http.Header{}}
}

// APIResponse is a finished API call.
type APIResponse struct {
	*httptest.ResponseRecorder
}

// Decode unmarshals the body into v and fails the test if it is not JSON.
func (r *APIResponse) Decode(v any) {
	if err := json.Unmarshal(r.Body.Bytes(), v); err != nil {
		panic("webtest: response is not JSON: " + err.Error() + ": " + r.Body.String())
	}
}

// Do sends method path with body: a []byte or string is sent as it is,
// anything else is marshalled to JSON; nil sends no body.
func (c *APIClient) Do(method, path string, body any) *APIResponse {
	c.env.T.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = bytes.NewReader([]byte(b))
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.env.T.Fatalf("marshal body: %v", err)
		}
		r = bytes.NewReader(data)
	}
	req := httptest.NewRequest(method, path, r)
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	rec := httptest.NewRecorder()
	c.env.Server.Echo.ServeHTTP(rec, req)
	return &APIResponse{ResponseRecorder: rec}
}

// Get is Do(GET, path, nil).
func (c *APIClient) Get(path string) *APIResponse {
	c.env.T.Helper()
	return c.Do(http.MethodGet, path, nil)
}

// Post is Do(POST, path, body).
func (c *APIClient) Post(path string, body any) *APIResponse {
	c.env.T.Helper()
	return c.Do(http.MethodPost, path, body)
}
