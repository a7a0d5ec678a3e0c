package web

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// TestCompress: what each kind of answer looks like through compress, with
// and without a client that accepts gzip.
func TestCompress(t *testing.T) {
	const min = 100
	long := strings.Repeat("gpubook ", 40) // 320 bytes
	cases := []struct {
		name     string
		handler  echo.HandlerFunc
		wantCode int
		wantBody string
		wantGzip bool // when the client accepts it
	}{
		{"short answer", func(c echo.Context) error { return c.String(http.StatusOK, "ok") }, 200, "ok", false},
		{"long answer", func(c echo.Context) error { return c.String(http.StatusOK, long) }, 200, long, true},
		{"long answer, its status kept", func(c echo.Context) error { return c.String(http.StatusNotFound, long) }, 404, long, true},
		{"written in pieces across the threshold", func(c echo.Context) error {
			c.Response().WriteHeader(http.StatusCreated)
			for i := 0; i < 40; i++ {
				c.Response().Write([]byte("gpubook "))
			}
			return nil
		}, 201, long, true},
		{"status without a body", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/elsewhere") }, 303, "", false},
		{"flushed: compressed however short", func(c echo.Context) error {
			c.Response().Write([]byte("first "))
			c.Response().Flush()
			c.Response().Write([]byte("second"))
			return nil
		}, 200, "first second", true},
		{"an error, answered by echo's handler", func(c echo.Context) error {
			return echo.NewHTTPError(http.StatusTeapot, "short and stout")
		}, 418, `{"message":"short and stout"}` + "\n", false},
		{"an error after a short write", func(c echo.Context) error {
			c.Response().Write([]byte("partial"))
			return errors.New("boom")
		}, 200, "partial", false},
	}
	for _, tc := range cases {
		for _, accepts := range []bool{false, true} {
			name := tc.name
			if accepts {
				name += ", gzip accepted"
			}
			t.Run(name, func(t *testing.T) {
				e := echo.New()
				e.Use(compress(min, func(echo.Context) bool { return false }))
				e.GET("/", tc.handler)
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				if accepts {
					req.Header.Set("Accept-Encoding", "gzip, deflate")
				}
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				if rec.Code != tc.wantCode {
					t.Errorf("status %d, want %d", rec.Code, tc.wantCode)
				}
				zipped := rec.Header().Get("Content-Encoding") == "gzip"
				if zipped != (accepts && tc.wantGzip) {
					t.Errorf("gzip = %v, want %v", zipped, accepts && tc.wantGzip)
				}
				if !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
					t.Errorf("Vary = %q, want Accept-Encoding in it", rec.Header().Get("Vary"))
				}
				body := rec.Body.String()
				if zipped {
					zr, err := gzip.NewReader(rec.Body)
					if err != nil {
						t.Fatal(err)
					}
					b, err := io.ReadAll(zr)
					if err != nil {
						t.Fatal(err)
					}
					body = string(b)
				}
				if body != tc.wantBody {
					t.Errorf("body %q, want %q", body, tc.wantBody)
				}
				if zipped && rec.Header().Get("Content-Length") != "" {
					t.Errorf("Content-Length %s on a compressed answer", rec.Header().Get("Content-Length"))
				}
				if ct := rec.Header().Get("Content-Type"); tc.wantBody != "" && strings.Contains(ct, "gzip") {
					t.Errorf("Content-Type %q sniffed from the compressed bytes", ct)
				}
			})
		}
	}
}

// BenchmarkCompressSmallAnswer is an API GET's small JSON answer (800
// bytes) to a client that accepts gzip (Go's own client does), through
// compress and, beside it, through echo's Gzip middleware with the same
// threshold:
//
//	go test -run '^$' -bench CompressSmallAnswer ./web/
func BenchmarkCompressSmallAnswer(b *testing.B) {
	for _, mw := range []struct {
		name string
		mw   echo.MiddlewareFunc
	}{
		{"compress", compress(gzipMinLength, func(echo.Context) bool { return false })},
		{"echo-Gzip", middleware.GzipWithConfig(middleware.GzipConfig{MinLength: gzipMinLength})},
	} {
		b.Run(mw.name, func(b *testing.B) {
			e := echo.New()
			e.Use(mw.mw)
			answer := strings.Repeat("x", 800)
			e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, answer) })
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			for b.Loop() {
				e.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

// A flush sends what was written so far, compressed, before the handler
// goes on (the CSV reports stream this way).
func TestCompressFlushSendsWhatWasWritten(t *testing.T) {
	rec := httptest.NewRecorder()
	var sent string
	e := echo.New()
	e.Use(compress(gzipMinLength, func(echo.Context) bool { return false }))
	e.GET("/", func(c echo.Context) error {
		c.Response().Write([]byte("first "))
		c.Response().Flush()
		zr, err := gzip.NewReader(strings.NewReader(rec.Body.String()))
		if err != nil {
			t.Fatalf("nothing readable sent at the flush: %v", err)
		}
		b, _ := io.ReadAll(zr) // the stream has no end yet
		sent = string(b)
		c.Response().Write([]byte("second"))
		return nil
	})
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	e.ServeHTTP(rec, req)
	if sent != "first " {
		t.Errorf("sent at the flush: %q, want %q", sent, "first ")
	}
}
