package web

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// anonBodyLimit is the largest body a visitor who is not signed in may
// send: the forms open to them (the language switch, the development
// sign-in, sign-out) are well under 1 KiB. Without it an anonymous post
// was read and parsed in full before anything refused it: 16 parallel
// 11 MB uploads to /admin/import cost the portal about 380 MiB.
const anonBodyLimit = 8 << 10

// anonymousWrites holds back state-changing requests of visitors who are
// not signed in, before the CSRF check reads their body: at most r of them
// per client address (the address clientip.go derives, so forged headers
// do not give a new budget), and none larger than anonBodyLimit. A
// declared length over the limit is refused unread; a body of unknown
// length stops being read at it.
func anonymousWrites(r Rate) echo.MiddlewareFunc {
	limit := rateLimitWith(r, byIP, models.M("err.anon_rate_limited"))
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		limited := limit(func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > anonBodyLimit {
				return models.NewError(models.EINVALID, models.M("err.anon_body_too_large"))
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, anonBodyLimit)
			return next(c)
		})
		return func(c echo.Context) error {
			if safeMethod(c.Request().Method) || models.UserFromContext(c.Request().Context()) != nil {
				return next(c)
			}
			return limited(c)
		}
	}
}

// safeMethod reports a method that changes nothing.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// csrfPeek is how much of a multipart body is read to find its first
// field: the token, which CSRFField puts first in every form.
const csrfPeek = 16 << 10

// formCSRF returns the _csrf field of a form post. A urlencoded form is
// parsed as usual (it is small: 1 MB at most, anonBodyLimit without a
// session). Of a multipart form only the first part is read, which must
// be _csrf, and what was read is put back in front of the body, so that
// the handler still parses the whole form: an upload is not read, let
// alone kept in memory, before its token is checked. Browsers send the
// fields in the order of the page, so this works without JavaScript.
func formCSRF(r *http.Request) string {
	mt, params, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEMultipartForm {
		return r.PostFormValue("_csrf")
	}
	var seen bytes.Buffer
	mr := multipart.NewReader(io.TeeReader(io.LimitReader(r.Body, csrfPeek), &seen), params["boundary"])
	tok := ""
	if p, err := mr.NextRawPart(); err == nil && p.FormName() == "_csrf" {
		b, err := io.ReadAll(io.LimitReader(p, 256))
		if err == nil && len(b) < 256 {
			tok = string(b)
		}
	}
	r.Body = replayed{Reader: io.MultiReader(bytes.NewReader(seen.Bytes()), r.Body), Closer: r.Body}
	return tok
}

// replayed is a request body with its first bytes read and put back.
type replayed struct {
	io.Reader
	io.Closer
}

// anonWriteRate is the budget of anonymous writes per address: three
// times the sign-in rate (60 a minute, 30 at once by default), room for a
// sign-in, its retries and a language switch or two, but not for a
// script.
func anonWriteRate(cfg Config) Rate {
	return Rate{PerMinute: 3 * cfg.SignInRate.PerMinute, Burst: 3 * cfg.SignInRate.Burst}
}
