package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpubook/gpubook/models"
)

// The client holds a bearer token that opens the user's account, and it
// prints what a portal sends. So it sends the token only over https:// (or
// to this machine), never to another origin a redirect points at, and it
// prints names, notes and messages with their control characters escaped:
// an escape sequence from a portal (or a man in the middle) could
// otherwise retitle the terminal, erase lines and fake output.

// errPlainHTTP refuses a portal whose token would cross the network in clear.
var errPlainHTTP = errors.New("refusing to send your token in clear over http:// to a host that is not this machine; " +
	"use the portal's https:// URL, or --allow-http (GPUBOOK_ALLOW_HTTP=1) if you accept that anyone on the way can read it")

// checkPortalURL parses a portal's URL: http or https with a host, and
// plain http only to a loopback host unless allowHTTP.
func checkPortalURL(portal string, allowHTTP bool) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(portal, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("portal %q: give an http:// or https:// URL", models.ShowText(portal))
	}
	if u.Scheme == "http" && !allowHTTP && !loopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("portal %s: %w", u.Redacted(), errPlainHTTP)
	}
	return u, nil
}

// loopbackHost reports whether host is this machine: localhost or a
// loopback address (127.0.0.0/8, ::1). Names other than localhost are not
// resolved: a resolver can say anything.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// portalHTTPClient follows a portal's redirects (at most 10) but drops the
// Authorization header on any that leaves the first request's origin
// (scheme, host and port): Go's own rule keeps it for another port or
// scheme of the same host.
func portalHTTPClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if origin(req.URL) != origin(via[0].URL) {
			req.Header.Del("Authorization")
		}
		return nil
	}}
}

// origin is scheme://host:port with the scheme's default port spelt out.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// show is untrusted text (a name, a note, a portal's message) made safe to
// print on one line.
func show(s string) string { return models.ShowText(s) }

// showAll is show for each of ss.
func showAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = show(s)
	}
	return out
}

// escapeJSONText rewrites, inside encoded JSON, the characters that JSON
// lets through raw but a terminal acts on (DEL, C1 controls such as U+009B
// CSI, bidi controls) as \uXXXX escapes: the JSON means the same.
func escapeJSONText(data []byte) []byte {
	// C0 controls cannot be in encoded JSON but as its own line ends and indent.
	raw := func(r rune) bool { return r >= 0x7f && models.Unprintable(r) }
	if bytes.IndexFunc(data, raw) < 0 {
		return data
	}
	var b bytes.Buffer
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if raw(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.Write(data[:n])
		}
		data = data[n:]
	}
	return b.Bytes()
}
