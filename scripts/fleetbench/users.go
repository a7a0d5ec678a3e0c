package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
)

// browser is one person using the portal in a browser: signed in with the
// development sign-in, then reading the calendar, the status and usage
// pages and booking, with a think time between clicks.
type browser struct {
	f     *fleet
	email string
	http  *http.Client
	base  string
	csrf  string
	think time.Duration
	// usage is the page it loads besides its own usage, half the time:
	// the cluster's for an admin, the team's for a lead ("" for others).
	usage, usageKind string
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)"`)

// bookings numbers the browsers' bookings, which spreads them over the
// free GPUs and hours; fleet.claim keeps any two from asking for the same
// GPU and hour.
var bookings atomic.Int64

func (f *fleet) newBrowser(i int, think time.Duration) *browser {
	jar, _ := cookiejar.New(nil)
	addr := fmt.Sprintf("172.16.%d.%d", (i+1)>>8&255, (i+1)&255)
	tr := &timed{next: f.hc, addr: addr}
	b := &browser{f: f, email: f.users[i%len(f.users)].Email, base: f.replicas[i%len(f.replicas)].Base, think: think,
		http: &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: tr}}
	switch j := i % len(f.users); {
	case j < admins:
		b.usage, b.usageKind = "/admin/usage", "page: cluster usage"
	case j < admins+leads && j < teamSize:
		b.usage, b.usageKind = fmt.Sprintf("/usage/team/%d", f.team), "page: team usage"
	}
	return b
}

// fetch loads a page (following redirects) and keeps its CSRF token; the
// time to the last byte is recorded under kind.
func (b *browser) fetch(ctx context.Context, kind, method, path string, form url.Values) error {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+path, body)
	if err != nil {
		return err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	start := time.Now()
	resp, err := b.http.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			b.f.rec.add(kind, time.Since(start), err.Error())
		}
		return err
	}
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	failure := ""
	if err != nil || resp.StatusCode >= 400 {
		failure = fmt.Sprintf("%s %s: %d %v", method, path, resp.StatusCode, err)
	}
	if ctx.Err() == nil {
		b.f.rec.add(kind, time.Since(start), failure)
	}
	if m := csrfMeta.FindSubmatch(page); m != nil {
		b.csrf = html.UnescapeString(string(m[1]))
	}
	if failure != "" {
		return fmt.Errorf("%s", failure)
	}
	return nil
}

// run signs in and clicks until ctx ends.
func (b *browser) run(ctx context.Context) {
	time.Sleep(time.Duration(rand.Int64N(int64(b.think) + 1)))
	for ctx.Err() == nil {
		if b.fetch(ctx, "page: sign in", http.MethodGet, "/login", nil) == nil &&
			b.fetch(ctx, "page: sign in", http.MethodPost, "/login/dev", url.Values{"email": {b.email}, "_csrf": {b.csrf}}) == nil {
			break
		}
		b.pause(ctx)
	}
	for b.pause(ctx) {
		switch r := rand.Float64(); {
		case r < 0.35:
			_ = b.fetch(ctx, "page: calendar", http.MethodGet, "/calendar", nil)
		case r < 0.6:
			_ = b.fetch(ctx, "page: status", http.MethodGet, "/status", nil)
		case r < 0.85 && b.usage != "" && rand.IntN(2) == 0:
			_ = b.fetch(ctx, b.usageKind, http.MethodGet, b.usage, nil)
		case r < 0.85:
			_ = b.fetch(ctx, "page: usage", http.MethodGet, "/usage", nil)
		default:
			b.book(ctx)
		}
	}
}

// book books GPU 6 of a running node (nobody's, see workload) for an
// hour, a few hours ahead: within the day the agents' schedules cover,
// so that the node's next schedule sync gets a 200 instead of a 304.
func (b *browser) book(ctx context.Context) {
	free := b.f.freeGPUs()
	if len(free) == 0 {
		return
	}
	var gpu int64
	var start time.Time
	for {
		k := int(bookings.Add(1))
		gpu = free[(k*7919)%len(free)]
		start = time.Now().UTC().Truncate(time.Hour).Add(time.Duration(2+k/len(free)) * time.Hour)
		if b.f.claim(gpu, start) {
			break
		}
	}
	form := url.Values{"gpu": {fmt.Sprint(gpu)}, "starts_at": {start.Format(time.RFC3339)},
		"ends_at": {start.Add(time.Hour).Format(time.RFC3339)}, "note": {"fleetbench"}, "_csrf": {b.csrf}}
	_ = b.fetch(ctx, "page: book", http.MethodPost, "/bookings", form)
}

// pause waits a think time (exponential around b.think); false once ctx ends.
func (b *browser) pause(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Duration(rand.ExpFloat64() * float64(b.think))):
		return true
	}
}
