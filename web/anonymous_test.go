package web_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// chosenCSRF is a token an attacker makes up, sent both as the anonymous
// CSRF cookie and as the form's field.
const chosenCSRF = "chosenByTheClient0123456789abcdef"

// bigUpload is a multipart form for /admin/import just under its 11 MB
// body limit, with tok as its first field, as the import page sends it.
func bigUpload(t *testing.T, tok string) (body []byte, contentType string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	must(t, w.WriteField("_csrf", tok))
	fw, err := w.CreateFormFile("file", "history.csv")
	must(t, err)
	line := []byte("alice@example.org,n1,1,2026-11-30 10:00,2026-11-30 12:00,from the sheet\n")
	for b.Len() < 11_000_000-len(line)-300 {
		_, err = fw.Write(line)
		must(t, err)
	}
	must(t, w.Close())
	return b.Bytes(), w.FormDataContentType()
}

// allocated is the least that serving req (made afresh for each of three
// tries) allocated, in bytes: TotalAlloc counts the whole process, and the
// least of three leaves out what other goroutines did meanwhile.
func allocated(t *testing.T, env *webtest.Env, req func() *http.Request) (uint64, *httptest.ResponseRecorder) {
	t.Helper()
	least := uint64(math.MaxUint64)
	var rec *httptest.ResponseRecorder
	for range 3 {
		r := req()
		rec = httptest.NewRecorder()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		env.Server.Echo.ServeHTTP(rec, r)
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least, rec
}

// TestLargeBodiesRefusedUnread: an 11 MB upload to /admin/import from
// someone who may not import is refused before its body is read, so it
// costs the portal less than 1 MiB, whoever sends it: no cookie at all, a
// CSRF cookie and field the client chose itself (declared length or
// chunked), or a signed-in user who is not an admin, with her own token.
// Before, the CSRF check parsed the whole form first: 11 to 25 MiB each.
func TestLargeBodiesRefusedUnread(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) { // not in parallel: it counts the process's allocations
			env := webtest.New(t, d)
			bob := env.Client()
			bob.SignIn("root@example.org", "Root") // the first user is the admin
			bob = env.Client()
			bob.SignIn("bob@example.org", "Bob")
			bob.Get("/")
			chosen, ctype := bigUpload(t, chosenCSRF)
			own, ownType := bigUpload(t, bob.CSRF)
			post := func(body []byte, ctype string, chunked bool) *http.Request {
				var r io.Reader = bytes.NewReader(body)
				if chunked {
					r = struct{ io.Reader }{r} // no length: httptest leaves it -1
				}
				req := httptest.NewRequest(http.MethodPost, "/admin/import", r)
				req.Header.Set("Content-Type", ctype)
				return req
			}
			withCookie := func(req *http.Request) *http.Request {
				req.AddCookie(&http.Cookie{Name: "gpubook_csrf", Value: chosenCSRF})
				return req
			}
			for _, c := range []struct {
				name string
				req  func() *http.Request
				want int
			}{
				{"no cookie", func() *http.Request { return post(chosen, ctype, false) }, http.StatusUnprocessableEntity},
				{"chosen token", func() *http.Request { return withCookie(post(chosen, ctype, false)) }, http.StatusUnprocessableEntity},
				// Read 8 KiB at most: the token passes, and the sign-in page is next.
				{"chosen token, chunked", func() *http.Request { return withCookie(post(chosen, ctype, true)) }, http.StatusSeeOther},
				{"not an admin", func() *http.Request { return bob.Dress(post(own, ownType, false)) }, http.StatusForbidden},
			} {
				t.Run(c.name, func(t *testing.T) {
					got, rec := allocated(t, env, c.req)
					t.Logf("%d: %d bytes allocated", rec.Code, got)
					if rec.Code != c.want {
						t.Errorf("status %d, want %d", rec.Code, c.want)
					}
					if got > 1<<20 {
						t.Errorf("an 11 MB upload allocated %d bytes (%.1f MiB), want < 1 MiB", got, float64(got)/(1<<20))
					}
				})
			}
		})
	}
}

// TestAnonymousLanguageSwitchStoresNoSession: 1,000 language switches of
// visitors who are not signed in, each with a CSRF cookie and field it
// chose itself and from an address of its own (so that the rate limit
// holds none back), store no session row; the choice still sticks, in a
// cookie. Before, each stored a row that lived for 7 days.
func TestAnonymousLanguageSwitchStoresNoSession(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			var last *http.Cookie
			for i := range 1000 {
				req := formRequest("/lang", url.Values{"to": {"zh-CN"}, "next": {"/"}, "_csrf": {chosenCSRF}})
				req.AddCookie(&http.Cookie{Name: "gpubook_csrf", Value: chosenCSRF})
				req = from(req, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), "", "")
				rec := httptest.NewRecorder()
				env.Server.Echo.ServeHTTP(rec, req)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("switch %d: %d %s", i, rec.Code, rec.Body.String())
				}
				for _, ck := range rec.Result().Cookies() {
					if ck.Name == "gpubook_lang" {
						last = ck
					}
				}
			}
			if got := countSessions(t, env); got != 0 {
				t.Errorf("session rows after 1,000 anonymous language switches = %d, want 0", got)
			}
			if last == nil || last.Value != "zh-CN" || !last.HttpOnly {
				t.Fatalf("language cookie = %v, want zh-CN, HttpOnly", last)
			}
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.AddCookie(last)
			rec := httptest.NewRecorder()
			env.Server.Echo.ServeHTTP(rec, req)
			if !strings.Contains(rec.Body.String(), `<html lang="zh-CN"`) {
				t.Errorf("the page after the switch is not in Chinese: %.200s", rec.Body.String())
			}
			// A cookie with a language the portal does not speak is ignored.
			req = httptest.NewRequest(http.MethodGet, "/", nil)
			req.AddCookie(&http.Cookie{Name: "gpubook_lang", Value: `"><script>`})
			rec = httptest.NewRecorder()
			env.Server.Echo.ServeHTTP(rec, req)
			if !strings.Contains(rec.Body.String(), `<html lang="en"`) {
				t.Errorf("a bogus language cookie: %.200s", rec.Body.String())
			}
		})
	}
}

// TestAnonymousWritesRateLimited: posts of visitors who are not signed in
// are limited per client address (forged forwarding headers give no new
// budget) with a 429 in the visitor's language; another address, and a
// signed-in user from the same one, are not held back.
func TestAnonymousWritesRateLimited(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d, func(c *web.Config) { c.SignInRate = web.Rate{PerMinute: 1, Burst: 4} })
			ann := env.Client()
			ann.SignIn("ann@example.org", "Ann") // one anonymous write of 12
			lang := func(remote, i int, accept string) *httptest.ResponseRecorder {
				req := formRequest("/lang", url.Values{"to": {"en"}, "_csrf": {chosenCSRF}})
				req.AddCookie(&http.Cookie{Name: "gpubook_csrf", Value: chosenCSRF})
				req.Header.Set("Accept-Language", accept)
				rec := httptest.NewRecorder()
				env.Server.Echo.ServeHTTP(rec, from(req, fmt.Sprintf("192.0.2.%d", remote), forged(i), forged(i+100)))
				return rec
			}
			var codes []int
			for i := range 11 {
				codes = append(codes, lang(1, i, "en").Code)
			}
			if want := strings.Repeat("303 ", 11); fmt.Sprint(codes) != "["+strings.TrimSpace(want)+"]" {
				t.Fatalf("the first 11 switches: %v, want all 303", codes)
			}
			for accept, want := range map[string]string{"en": "Too many requests from your address without signing in", "zh-CN": "您的地址在未登录状态下请求过于频繁"} {
				rec := lang(1, 20, accept)
				if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), want) {
					t.Errorf("%s: %d %q, want 429 saying %q", accept, rec.Code, rec.Header().Get("Retry-After"), want)
				}
			}
			if rec := lang(2, 0, "en"); rec.Code != http.StatusSeeOther {
				t.Errorf("another address: %d, want 303", rec.Code)
			}
			if res := ann.Post("/lang", url.Values{"to": {"zh-CN"}, "next": {"/"}}); res.Code != http.StatusSeeOther {
				t.Errorf("signed in, from the limited address: %d, want 303", res.Code)
			}
		})
	}
}
