package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
)

// refusingProxy sits in front of the real portal and, while code is set,
// answers every agent call with it: a re-enrolled node (401), a proxy's
// ACL (403), a restored database that lost the node (404), maintenance (503).
type refusingProxy struct {
	srv  *httptest.Server
	code atomic.Int32
}

func newRefusingProxy(t *testing.T, target string) *refusingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &refusingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := int(p.code.Load()); c != 0 {
			http.Error(w, `{"error":"refused by the test proxy"}`, c)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// TestAgentPortalRefusalsLoseNothing: answers that say nothing about the
// data (401, 403, 404, 503) make the agent wait and resend in order; the
// portal ends with every minute exactly once and nothing is set aside.
func TestAgentPortalRefusalsLoseNothing(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := enrolledE2E(t, d)
			proxy := newRefusingProxy(t, x.srv.URL)
			x.client.BaseURL = proxy.srv.URL
			x.run(2 * time.Minute)
			for _, code := range []int32{401, 403, 404, 503} {
				proxy.code.Store(code)
				x.run(150 * time.Second)
			}
			if st := x.d.CurrentStatus(); st.SpoolDepth < 8 || st.SetAside != 0 {
				t.Errorf("during the refusals: spool depth %d, set aside %d; want ≥ 8 waiting, none set aside", st.SpoolDepth, st.SetAside)
			}
			proxy.code.Store(0)
			x.run(2 * time.Minute)
			if err := x.d.DeliverOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			minutes := int64(13) // 14 min run: 14:00–14:12 complete
			var total, distinct int64
			x.env.DB.Gorm.Table("gpu_usage_minutes").Count(&total)
			x.env.DB.Gorm.Table("gpu_usage_minutes").Where("minute >= ? AND minute < ?", e2eT0, e2eT0.Add(time.Duration(minutes)*time.Minute)).Distinct("minute").Count(&distinct)
			if total != 8*minutes || distinct != minutes {
				t.Errorf("stored %d GPU-minutes over %d distinct minutes, want %d over %d", total, distinct, 8*minutes, minutes)
			}
			if st := x.d.CurrentStatus(); st.SpoolDepth != 0 || st.SetAside != 0 {
				t.Errorf("after: spool depth %d, set aside %d; want 0 and 0", st.SpoolDepth, st.SetAside)
			}
		})
	}
}

// TestAgentHealthOnNodePage: what the heartbeat says the agent lost or
// could not do is shown on the node's page (stored on both databases).
func TestAgentHealthOnNodePage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := enrolledE2E(t, d)
			page := "/admin/nodes/" + strconv.FormatInt(x.nodeID, 10) + "/enroll"
			admin := x.env.Client()
			admin.SignIn("root@example.org", "Root Admin")
			if err := x.d.HeartbeatOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			res := admin.Get(page)
			for _, id := range []string{"agent-nvml-down", "agent-set-aside", "agent-dropped", "agent-lock"} {
				if res.Doc.Find(`[data-testid="`+id+`"]`).Length() != 0 {
					t.Errorf("healthy agent: %s shown", id)
				}
			}
			down := x.clock.Now().Add(-time.Hour)
			hb := wire.Heartbeat{Node: "n1", AgentVersion: "test", SentAt: x.clock.Now(), NVMLOK: false,
				SpoolSetAside: 2, SpoolSetAsideReason: "422 usage: unknown GPU", SpoolSetAsideAt: down,
				SpoolDroppedUsage: 40, SpoolDroppedEvents: 1, NVMLDownSince: down,
				Lock: "detect (cannot lock: no cgroup devices controller (v1) and no cgroup2 mount under /sys/fs/cgroup)"}
			if err := x.client.PostJSON(context.Background(), wire.PathHeartbeat, hb); err != nil {
				t.Fatal(err)
			}
			res = admin.Get(page)
			checks := map[string]string{"agent-nvml-down": "No NVML since", "agent-set-aside": "422 usage: unknown GPU", "agent-dropped": "40 usage, 1",
				"agent-lock": "cannot, so it only detects unbooked use: detect (cannot lock: no cgroup devices controller"}
			for id, want := range checks {
				if got := res.Doc.Find(`[data-testid="` + id + `"]`).Text(); !strings.Contains(got, want) {
					t.Errorf("%s = %q, want it to contain %q", id, got, want)
				}
			}
			if !res.Doc.Find(`[data-testid="agent-lock"]`).HasClass("alert") {
				t.Error("a node that cannot lock is not shown as an alert")
			}
			hb.Lock = "lock v2"
			if err := x.client.PostJSON(context.Background(), wire.PathHeartbeat, hb); err != nil {
				t.Fatal(err)
			}
			res = admin.Get(page)
			if got, lock := res.Doc.Find(`[data-testid="agent-lock"]`).Text(), res.Doc.Find(`[data-testid="agent-lock"]`); !strings.Contains(got, "Enforcement on this node: lock v2.") || lock.HasClass("alert") {
				t.Errorf("agent-lock = %q (alert %v), want the mode, not an alert", got, lock.HasClass("alert"))
			}
			// A lock that passed its self-check but guards no GPU yet is
			// not shown as active.
			hb.Lock = "lock v1" + wire.LockGuardingNothing + "NVML lists no GPUs)"
			if err := x.client.PostJSON(context.Background(), wire.PathHeartbeat, hb); err != nil {
				t.Fatal(err)
			}
			res = admin.Get(page)
			if got, lock := res.Doc.Find(`[data-testid="agent-lock"]`).Text(), res.Doc.Find(`[data-testid="agent-lock"]`); !strings.Contains(got, "no GPU to guard yet, so nothing is locked: lock v1 (guarding nothing: NVML lists no GPUs).") || !lock.HasClass("alert") {
				t.Errorf("agent-lock = %q (alert %v), want an alert that nothing is locked", got, lock.HasClass("alert"))
			}
		})
	}
}
