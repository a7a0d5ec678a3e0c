// Package webtest runs a fully wired gpubook server on a real database for
// tests, and a small browser-like client over Echo's ServeHTTP that keeps
// cookies and the CSRF token between requests.
package webtest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/alexedwards/scs/postgresstore"
	"github.com/alexedwards/scs/sqlite3store"
	"github.com/alexedwards/scs/v2"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/views/i18n"
	"github.com/gpubook/gpubook/web"
)

// Env is a wired server and its database.
type Env struct {
	T      testing.TB
	Server *web.Server
	DB     *store.DB
}

// SessionStore returns the scs store for db's dialect on its shared *sql.DB.
func SessionStore(db *store.DB) scs.Store {
	if db.Dialect == store.Postgres {
		return postgresstore.NewWithCleanupInterval(db.SQL, 0)
	}
	return sqlite3store.NewWithCleanupInterval(db.SQL, 0)
}

// New starts a server with the development sign-in on, on a fresh database.
func New(t testing.TB, dialect string, opts ...func(*web.Config)) *Env {
	t.Helper()
	return NewOn(t, storetest.Open(t, dialect), opts...)
}

// NewOn is New on a database the test opened itself.
func NewOn(t testing.TB, db *store.DB, opts ...func(*web.Config)) *Env {
	t.Helper()
	cfg := web.Config{Listen: "127.0.0.1:0", DevLogin: true, Location: time.UTC,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), I18n: catalogs()}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := web.New(cfg, telemetry.NewWhole(db), SessionStore(db))
	if err != nil {
		t.Fatalf("web.New: %v", err)
	}
	return &Env{T: t, Server: srv, DB: db}
}

// catalogs are the parsed en and zh-CN catalogs, parsed once per test
// process and shared by its servers (read only): parsing them for every
// server was 8% of the web tests' CPU.
var catalogs = sync.OnceValue(i18n.MustLoad)

// AddUser creates a user directly in the database.
func (e *Env) AddUser(email, name string, admin bool) *models.User {
	e.T.Helper()
	u := &models.User{Email: email, Name: name, IsAdmin: admin}
	if err := e.DB.CreateUser(context.Background(), u, models.CLIActor); err != nil {
		e.T.Fatalf("add user: %v", err)
	}
	return u
}

// Client is a browser: it keeps cookies and the page's CSRF token.
type Client struct {
	env     *Env
	cookies map[string]*http.Cookie
	CSRF    string
	Header  http.Header // sent with every request (e.g. Accept-Language)
}

// Client returns a new anonymous browser.
func (e *Env) Client() *Client {
	return &Client{env: e, cookies: map[string]*http.Cookie{}, Header: http.Header{}}
}

// Response is a finished request with its parsed HTML.
type Response struct {
	*httptest.ResponseRecorder
	Doc *goquery.Document
}

// Do sends a request through the wired router.
func (c *Client) Do(req *http.Request) *Response {
	c.env.T.Helper()
	c.Dress(req)
	rec := httptest.NewRecorder()
	c.env.Server.Echo.ServeHTTP(rec, req)
	for _, ck := range rec.Result().Cookies() {
		if ck.MaxAge < 0 {
			delete(c.cookies, ck.Name)
		} else {
			c.cookies[ck.Name] = ck
		}
	}
	res := &Response{ResponseRecorder: rec}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(rec.Body.Bytes()))
		if err != nil {
			c.env.T.Fatalf("parse HTML: %v", err)
		}
		res.Doc = doc
		if tok, ok := doc.Find(`meta[name="csrf-token"]`).Attr("content"); ok && tok != "" {
			c.CSRF = tok
		}
	}
	return res
}

// Dress gives req the client's headers and cookies, for a test that
// sends it through the router itself (to count what serving it costs).
func (c *Client) Dress(req *http.Request) *http.Request {
	for k, v := range c.Header {
		req.Header[k] = v
	}
	for _, ck := range c.cookies {
		req.AddCookie(ck)
	}
	return req
}

// Get fetches a page.
func (c *Client) Get(path string) *Response {
	c.env.T.Helper()
	return c.Do(httptest.NewRequest(http.MethodGet, path, nil))
}

// Post submits a form with the client's CSRF token (unless form sets _csrf).
func (c *Client) Post(path string, form url.Values) *Response {
	c.env.T.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["_csrf"]; !ok {
		form.Set("_csrf", c.CSRF)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.Do(req)
}

// SignIn signs in through the development sign-in as email (creating the
// user with name if needed) and fails the test unless it worked. Like a
// browser it then follows the redirect: that page carries the CSRF token
// of the signed-in session (the anonymous one is void after sign-in).
func (c *Client) SignIn(email, name string) {
	c.env.T.Helper()
	c.Get("/login")
	res := c.Post("/login/dev", url.Values{"email": {email}, "name": {name}})
	if res.Code != http.StatusSeeOther {
		c.env.T.Fatalf("sign in as %s: status %d: %s", email, res.Code, res.Body.String())
	}
	c.Get(res.Header().Get("Location"))
}
