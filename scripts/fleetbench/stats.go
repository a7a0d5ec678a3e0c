package main

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
)

// recorder keeps every request's latency and failures by kind, for the
// step under way; take hands them over and starts afresh.
type recorder struct {
	mu     sync.Mutex
	lat    map[string][]time.Duration
	errors map[string]int
	last   map[string]string // the latest failure of each kind, to show
	// slow, when set, gets a line for each request that took over
	// slowOver: when it ended, its kind and duration (-slow).
	slow     io.Writer
	slowOver time.Duration
}

func newRecorder() *recorder {
	return &recorder{lat: map[string][]time.Duration{}, errors: map[string]int{}, last: map[string]string{}}
}

func (r *recorder) add(kind string, d time.Duration, failure string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lat[kind] = append(r.lat[kind], d)
	if r.slow != nil && d > r.slowOver {
		fmt.Fprintf(r.slow, "%s %s %.0f ms %s\n", time.Now().UTC().Format("15:04:05.000"), kind, ms(d), failure)
	}
	if failure != "" {
		r.errors[kind]++
		r.last[kind] = failure
	}
}

// take returns what was recorded since the last take.
func (r *recorder) take() (map[string][]time.Duration, map[string]int, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lat, errs, last := r.lat, r.errors, r.last
	r.lat, r.errors, r.last = map[string][]time.Duration{}, map[string]int{}, map[string]string{}
	return lat, errs, last
}

// timed is a RoundTripper that records each try of each request under
// its kind, and sets X-Forwarded-For: the portal trusts 127.0.0.1 as its
// load balancer, so that every simulated node and browser has an address
// of its own, as behind a real one (the per-address limits of enrolment
// and sign-in then apply per machine, not to the whole fleet at once).
type timed struct {
	next http.RoundTripper
	rec  *recorder
	addr string
	kind func(*http.Request) string
}

func (t *timed) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Forwarded-For", t.addr)
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	d := time.Since(start)
	switch {
	case t.rec == nil: // the caller times the whole exchange itself
	case err != nil:
		t.rec.add(t.kind(req), d, err.Error())
	case resp.StatusCode >= 400:
		t.rec.add(t.kind(req), d, fmt.Sprintf("%s %s: %d", req.Method, req.URL.Path, resp.StatusCode))
	default:
		t.rec.add(t.kind(req), d, "")
	}
	return resp, err
}

// quantile is the q-quantile of ds (sorted in place); 0 for none.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
