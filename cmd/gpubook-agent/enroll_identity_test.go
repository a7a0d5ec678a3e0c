package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// enrollPortal answers every enrolment as node id.
func enrollPortal(t *testing.T, id int64) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != wire.PathEnroll {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `{"node_id":%d,"node_name":"gpu%02d","credential":"cred-%d"}`, id, id, id)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestEnrollAnotherIdentityRestartsCounters: the spool's batch sequence,
// drop counters and set-aside entries survive enrolling again as the same
// node with the same portal, and start afresh (the old spool kept aside,
// not sent) for another portal or another node.
func TestEnrollAnotherIdentityRestartsCounters(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "agent.conf")
	if err := os.WriteFile(conf, []byte("state_dir = "+dir+"\ncredential_file = "+filepath.Join(dir, "credential.json")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"GPUBOOK_AGENT_CONFIG": conf}[k] }
	spoolDir := filepath.Join(dir, "spool")
	portalA, portalA7, portalB := enrollPortal(t, 4), enrollPortal(t, 7), enrollPortal(t, 4)
	enroll := func(portal string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(context.Background(), []string{"gpubook-agent", "enroll", "--portal", portal, "--token", "tok"}, getenv, &out, &errb); err != nil {
			t.Fatalf("enroll at %s: %v %s", portal, err, errb.String())
		}
		return out.String()
	}
	enroll(portalA)
	fill(t, spoolDir)
	tests := []struct {
		name     string
		portal   string
		fresh    bool
		wantNote string
	}{
		{"same portal, same node", portalA, false, ""},
		{"same portal, another node", portalA7, true, `was node "gpu04" (id 4) at ` + portalA},
		{"another portal", portalB, true, `was node "gpu07" (id 7) at ` + portalA7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := enroll(tt.portal)
			sp, err := spool.Open(spoolDir, spool.DefaultLimits(), time.Now, nil)
			if err != nil {
				t.Fatal(err)
			}
			st := sp.Stats()
			e, err := sp.Append(wire.PathHeartbeat, map[string]int{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.fresh {
				if st.Depth != 0 || st.DroppedTotal() != 0 || st.SetAside != 0 || st.SetAsideReason != "" || e.Seq != 1 {
					t.Errorf("after a new identity: depth %d, dropped %d, set aside %d (%q), next seq %d; want all zero and seq 1",
						st.Depth, st.DroppedTotal(), st.SetAside, st.SetAsideReason, e.Seq)
				}
				if !strings.Contains(out, tt.wantNote) || !strings.Contains(out, "undelivered report(s) kept in "+spoolDir+".previous") {
					t.Errorf("enroll said %q, want %q and where the old spool went", out, tt.wantNote)
				}
				if _, err := os.Stat(filepath.Join(spoolDir+".previous", "state.json")); err != nil {
					t.Errorf("old spool not kept: %v", err)
				}
			} else {
				if st.Depth != 1 || st.DroppedTotal() == 0 || st.SetAside != 1 || e.Seq < 5 {
					t.Errorf("same identity: depth %d, dropped %d, set aside %d, next seq %d; want the counters kept", st.Depth, st.DroppedTotal(), st.SetAside, e.Seq)
				}
				if strings.Contains(out, "afresh") {
					t.Errorf("enroll as the same node said %q", out)
				}
			}
			fill(t, spoolDir)
		})
	}
}

// fill leaves counters in the spool: entries dropped at its size limit,
// one set aside as invalid, one waiting.
func fill(t *testing.T, dir string) {
	t.Helper()
	sp, err := spool.Open(dir, spool.Limits{MaxBytes: 1}, time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := sp.Append(wire.PathUsage, map[string]string{"x": "y"}); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = sp.Drain(context.Background(), func(context.Context, spool.Entry) error { return errors.New("422 invalid") }, func(error) bool { return true }, nil)
	if _, err := sp.Append(wire.PathUsage, map[string]string{"x": "y"}); err != nil {
		t.Fatal(err)
	}
}
