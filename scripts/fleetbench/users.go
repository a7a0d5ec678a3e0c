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
	"sync"
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
	// noUsage: it loads no usage page (-quiet-usage), only the crowd does.
	noUsage bool
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

// signIn signs in with the development sign-in, again after a pause
// until it worked; false once ctx ends.
func (b *browser) signIn(ctx context.Context) bool {
	for ctx.Err() == nil {
		if b.fetch(ctx, "page: sign in", http.MethodGet, "/login", nil) == nil &&
			b.fetch(ctx, "page: sign in", http.MethodPost, "/login/dev", url.Values{"email": {b.email}, "_csrf": {b.csrf}}) == nil {
			return true
		}
		b.pause(ctx)
	}
	return false
}

// run signs in and clicks until ctx ends.
func (b *browser) run(ctx context.Context) {
	time.Sleep(time.Duration(rand.Int64N(int64(b.think) + 1)))
	if !b.signIn(ctx) {
		return
	}
	for b.pause(ctx) {
		switch r := rand.Float64(); {
		case r < 0.35:
			_ = b.fetch(ctx, "page: calendar", http.MethodGet, "/calendar", nil)
		case r < 0.6:
			_ = b.fetch(ctx, "page: status", http.MethodGet, "/status", nil)
		case r < 0.85 && b.noUsage: // -quiet-usage: the calendar instead
			_ = b.fetch(ctx, "page: calendar", http.MethodGet, "/calendar", nil)
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

// crowd is -crowd browsers that load usage pages all at the same moment
// (the "8 concurrent viewers"), at the start of a level's window
// and every crowdEvery in it: of eight, three their own usage, three the cluster's (admins)
// and two the team's (leads). Each gathering's requests are recorded
// under crowdKind, the first gathering of the run under crowdFirstKind
// too: with -quiet-usage it is the first usage view since the portal
// started, as a lab's first viewer of the morning finds it.
type crowd struct {
	members []*browser
	first   bool // the next gathering is the run's first
}

const (
	crowdEvery     = 15 * time.Second
	crowdKind      = "page: usage, crowd at once"
	crowdFirstKind = "page: usage, crowd's first"
)

func (f *fleet) newCrowd(n int, think time.Duration) *crowd {
	c := &crowd{first: true}
	for i := range n {
		b := f.newBrowser(i, think) // user i: admins and leads first
		b.http.Transport.(*timed).addr = fmt.Sprintf("172.17.%d.%d", (i+1)>>8&255, (i+1)&255)
		c.members = append(c.members, b)
	}
	return c
}

// signIn signs every member in, one after another.
func (c *crowd) signIn(ctx context.Context) bool {
	for _, b := range c.members {
		if !b.signIn(ctx) {
			return false
		}
	}
	return true
}

// gather has every member load its usage page at one moment and returns
// when all have their page.
func (c *crowd) gather(ctx context.Context) {
	go1 := make(chan struct{})
	var wg sync.WaitGroup
	for j, b := range c.members {
		path, kind := "/usage", crowdKind
		if j%3 != 0 && b.usage != "" {
			path = b.usage
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-go1
			start := time.Now()
			err := b.fetch(ctx, kind, http.MethodGet, path, nil)
			if c.first && ctx.Err() == nil {
				failure := ""
				if err != nil {
					failure = err.Error()
				}
				b.f.rec.add(crowdFirstKind, time.Since(start), failure)
			}
		}()
	}
	close(go1)
	wg.Wait()
	c.first = false
}

// during gathers the crowd at once and then every crowdEvery until ctx
// ends.
func (c *crowd) during(ctx context.Context) {
	for {
		c.gather(ctx)
		if sleep(ctx, crowdEvery) != nil {
			return
		}
	}
}
