package web

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// compress gzips the answers of at least minLength bytes to clients that
// accept gzip, and sends smaller ones as they are. It does what echo's Gzip
// middleware does with a MinLength, but takes a compressor from its pool
// only when an answer reaches minLength: echo's resets one for every
// request, and twice for an answer that stays small — each reset clears
// about 640 kB of deflate tables, some 40 µs of a 400 µs API GET on the
// machines this was measured on (docs/performance.md).
func compress(minLength int, skip middleware.Skipper) echo.MiddlewareFunc {
	zips := &sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if skip(c) {
				return next(c)
			}
			res := c.Response()
			res.Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
			if !strings.Contains(c.Request().Header.Get(echo.HeaderAcceptEncoding), "gzip") {
				return next(c)
			}
			w := &gzipWriter{ResponseWriter: res.Writer, min: minLength, zips: zips}
			res.Writer = w
			defer func() {
				res.Writer = w.ResponseWriter // an error's answer, written after this returns, goes out plain
				w.finish()
			}()
			return next(c)
		}
	}
}

// gzipWriter holds an answer's status and its first bytes until it knows
// whether the answer reaches min bytes: then it compresses it, else it
// sends it plain when the handler is done (finish).
type gzipWriter struct {
	http.ResponseWriter
	min  int
	zips *sync.Pool
	code int          // the status the handler set, not yet sent; 0 if none
	held []byte       // the answer so far, while shorter than min
	zw   *gzip.Writer // the compressor, once the answer reached min
}

func (w *gzipWriter) WriteHeader(code int) {
	w.Header().Del(echo.HeaderContentLength) // the length sent may be the compressed one
	w.code = code
}

func (w *gzipWriter) Write(b []byte) (int, error) {
	if w.zw != nil {
		return w.zw.Write(b)
	}
	if w.Header().Get(echo.HeaderContentType) == "" { // sniffed from the plain bytes, not the compressed ones
		w.Header().Set(echo.HeaderContentType, http.DetectContentType(b))
	}
	w.held = append(w.held, b...)
	if len(w.held) < w.min {
		return len(b), nil
	}
	if err := w.startGzip(); err != nil {
		return 0, err
	}
	return len(b), nil
}

// startGzip sends the status with Content-Encoding: gzip and compresses
// what was held.
func (w *gzipWriter) startGzip() error {
	w.Header().Set(echo.HeaderContentEncoding, "gzip")
	w.Header().Del(echo.HeaderContentLength)
	w.sendStatus()
	w.zw = w.zips.Get().(*gzip.Writer)
	w.zw.Reset(w.ResponseWriter)
	_, err := w.zw.Write(w.held)
	w.held = nil
	return err
}

func (w *gzipWriter) sendStatus() {
	if w.code != 0 {
		w.ResponseWriter.WriteHeader(w.code)
	}
}

// FlushError compresses from here on, however short the answer so far:
// more is coming, of a length nobody knows yet. It sends what was written,
// and says why it could not (http.ResponseController calls it).
func (w *gzipWriter) FlushError() error {
	if w.zw == nil {
		if err := w.startGzip(); err != nil {
			return err
		}
	}
	if err := w.zw.Flush(); err != nil {
		return err
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush is FlushError for callers of http.Flusher, which has no error.
func (w *gzipWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish ends the gzip stream, or sends a short answer plain. A handler
// that wrote nothing, not even a status, leaves the answer to echo's
// error handler.
func (w *gzipWriter) finish() {
	if w.zw != nil {
		w.zw.Close()
		w.zips.Put(w.zw)
		w.zw = nil
		return
	}
	if w.code == 0 && w.held == nil {
		return
	}
	w.sendStatus()
	if len(w.held) > 0 {
		w.ResponseWriter.Write(w.held)
	}
}
