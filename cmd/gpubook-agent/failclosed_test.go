package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/daemon"
)

// TestStatusDegraded: every degraded state the daemon writes is printed.
func TestStatusDegraded(t *testing.T) {
	now := time.Now()
	st := daemon.Status{Node: "gpu01", At: now, NVMLDownSince: now.Add(-3 * time.Minute), NVMLError: "ERROR_DRIVER_NOT_LOADED",
		MetricsProblem: "listen tcp 127.0.0.1:9478: address already in use", SetAside: 2, SetAsideReason: "422 unknown GPU",
		Dropped: map[string]int64{"usage": 5, "idle": 1}}
	var out bytes.Buffer
	if err := printStatus(&out, st, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NO NVML since 3m0s ago (ERROR_DRIVER_NOT_LOADED)", "metrics: NOT served: listen tcp",
		"2 set aside as invalid (newest: 422 unknown GPU)", "6 dropped at the limits (usage 5, violations 0, idle 1)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
}

// TestExemptUsersAddToRoot: listing users adds to the default; it must
// not un-exempt root, nor may system_uid_max = -1.
func TestExemptUsersAddToRoot(t *testing.T) {
	env := map[string]string{"GPUBOOK_AGENT_EXEMPT_USERS": "svc-backup", "GPUBOOK_AGENT_SYSTEM_UID_MAX": "-1"}
	c, err := loadConfig("/nonexistent", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	r := c.exemptRules()
	tests := []struct {
		user string
		uid  int
		want bool
	}{
		{"root", 0, true}, {"root", -1, true}, {"toor", 0, true}, {"svc-backup", 1500, true}, {"gdm", 120, false}, {"alice", 1001, false},
	}
	for _, tt := range tests {
		if got := r.Exempt(tt.user, tt.uid, nil); got != tt.want {
			t.Errorf("Exempt(%q, %d) = %v, want %v", tt.user, tt.uid, got, tt.want)
		}
	}
}

// TestEnrollMessages: the portal's message is printed once, without the
// JSON around it or repeated prefixes; an address without a scheme is
// refused before anything is sent.
func TestEnrollMessages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"code":"EUNAUTHORIZED","message":"This enrolment token is unknown, already used or expired."}}`))
	}))
	defer srv.Close()
	getenv := setup(t, "/nonexistent")
	tests := []struct{ name, portal, want string }{
		{"portal refuses", srv.URL, "agent: enroll: the portal refused (401): This enrolment token is unknown, already used or expired."},
		{"no scheme", "gpubook.example.org", `agent: enroll: --portal "gpubook.example.org": give the full address with its scheme, e.g. https://gpubook.example.org`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"gpubook-agent", "enroll", "--portal", tt.portal, "--token", "t",
				"--credential-file", filepath.Join(t.TempDir(), "c.json")}, getenv, &out, &errb)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant  %s", err, tt.want)
			}
		})
	}
}
