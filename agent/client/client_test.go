package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/models/wire"
)

// newClient returns a client whose sleeps are recorded, not slept.
func newClient(url string, slept *[]time.Duration) *client.Client {
	c := client.New(url, "node-secret", "test")
	c.Rand = func() float64 { return 0.5 }
	c.Now = func() time.Time { return time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC) }
	c.Sleep = func(ctx context.Context, d time.Duration) error {
		*slept = append(*slept, d)
		return ctx.Err()
	}
	return c
}

func TestRetryBackoff(t *testing.T) {
	tests := []struct {
		name      string
		statuses  []int
		header    string
		wantCalls int32
		wantSlept []time.Duration
		wantErr   bool
	}{
		{"success first time", []int{204}, "", 1, nil, false},
		{"two 503 then success: jittered doubling", []int{503, 503, 204}, "", 3, []time.Duration{500 * time.Millisecond, time.Second}, false},
		{"gives up after 4 tries", []int{500, 500, 500, 500, 500}, "", 4, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}, true},
		{"400 is permanent: no retry", []int{400}, "", 1, nil, true},
		{"429 honours Retry-After", []int{429, 204}, "7", 2, []time.Duration{7 * time.Second}, false},
		{"Retry-After as a date", []int{503, 204}, "Mon, 02 Mar 2026 14:00:20 GMT", 2, []time.Duration{20 * time.Second}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				if got := r.Header.Get("Authorization"); got != "Bearer node-secret" {
					t.Errorf("Authorization = %q", got)
				}
				if tt.header != "" {
					w.Header().Set("Retry-After", tt.header)
				}
				w.WriteHeader(tt.statuses[n-1])
			}))
			defer srv.Close()
			var slept []time.Duration
			err := newClient(srv.URL, &slept).PostJSON(context.Background(), wire.PathHeartbeat, wire.Heartbeat{Node: "n1"})
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("calls = %d, want %d", got, tt.wantCalls)
			}
			if !slices.Equal(slept, tt.wantSlept) {
				t.Errorf("slept = %v, want %v", slept, tt.wantSlept)
			}
		})
	}
}

func TestBackoffCapAndPermanent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	var slept []time.Duration
	c := newClient(srv.URL, &slept)
	c.Attempts, c.Rand = 8, func() float64 { return 0.999999 }
	err := c.PostJSON(context.Background(), wire.PathUsage, struct{}{})
	if client.Permanent(err) {
		t.Errorf("503 reported permanent")
	}
	for _, d := range slept {
		if d > c.MaxDelay {
			t.Errorf("slept %v, over the cap %v", d, c.MaxDelay)
		}
	}
	if got, want := len(slept), 7; got != want {
		t.Errorf("sleeps = %d, want %d", got, want)
	}
}

func TestCancelledDuringBackoff(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	var slept []time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	c := newClient(srv.URL, &slept)
	c.Sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	if err := c.PostJSON(ctx, wire.PathUsage, struct{}{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestScheduleETag(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v2"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v2"`)
		_, _ = w.Write([]byte(`{"node":"n1","bookings":[{"id":5,"user":"alice","gpu_uuids":["GPU-1"]}]}`))
	}))
	defer srv.Close()
	var slept []time.Duration
	c := newClient(srv.URL, &slept)
	tests := []struct {
		name, etag, wantETag string
		wantChanged          bool
		wantBookings         int
	}{
		{"first fetch", "", `"v2"`, true, 1},
		{"stale etag", `"v1"`, `"v2"`, true, 1},
		{"current etag: 304", `"v2"`, `"v2"`, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, etag, changed, err := c.Schedule(context.Background(), tt.etag)
			if err != nil {
				t.Fatal(err)
			}
			if etag != tt.wantETag || changed != tt.wantChanged || len(s.Bookings) != tt.wantBookings {
				t.Errorf("got etag %q changed %v bookings %d; want %q %v %d", etag, changed, len(s.Bookings), tt.wantETag, tt.wantChanged, tt.wantBookings)
			}
		})
	}
}

func TestEnroll(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != wire.PathEnroll || r.Header.Get("Authorization") != "" {
			t.Errorf("path %s auth %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		_, _ = w.Write([]byte(`{"node_id":3,"node_name":"gpu01","credential":"c-123"}`))
	}))
	defer srv.Close()
	c := client.New(srv.URL+"/", "", "test")
	resp, err := c.Enroll(context.Background(), wire.EnrollRequest{Token: "t", Hostname: "gpu01"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp, (wire.EnrollResponse{NodeID: 3, NodeName: "gpu01", Credential: "c-123"}); got != want {
		t.Errorf("resp = %+v, want %+v", got, want)
	}
}
