package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/web/webtest"
)

// TestGzipOnlyWhenItPays: small answers go out plain, pages compressed.
func TestGzipOnlyWhenItPays(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, store.SQLite)
	c := env.Client()
	get := func(path string) *webtest.Response {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Header.Set("Accept-Encoding", "gzip")
		return c.Do(r)
	}
	tests := []struct {
		path     string
		wantGzip bool
	}{
		{"/healthz", false},
		{"/static/css/app.css", true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := get(tt.path)
			if res.Code != http.StatusOK {
				t.Fatalf("status %d", res.Code)
			}
			if got := res.Header().Get("Content-Encoding") == "gzip"; got != tt.wantGzip {
				t.Errorf("gzip = %v, want %v (body %d bytes)", got, tt.wantGzip, res.Body.Len())
			}
		})
	}
}
