package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestAgentSampleFailureDegradesNode: an agent whose samples fail says so
// in its heartbeat; the node page then shows it degraded with the error,
// the live status page marks the node's last figures stale, and both turn
// healthy again once sampling works (stored on both databases).
func TestAgentSampleFailureDegradesNode(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := enrolledE2E(t, d)
			ctx := context.Background()
			x.run(2 * time.Minute)
			if err := x.d.DeliverOnce(ctx); err != nil {
				t.Fatal(err)
			}
			admin := x.env.Client()
			admin.SignIn("root@example.org", "Root Admin")
			page := "/admin/nodes/" + strconv.FormatInt(x.nodeID, 10) + "/enroll"
			check := func(when string, degraded bool) {
				t.Helper()
				if err := x.d.HeartbeatOnce(ctx); err != nil {
					t.Fatal(err)
				}
				node := admin.Get(page)
				status := admin.Get("/status")
				agents := admin.Get("/admin/agents")
				badge := "agent-online"
				if degraded {
					badge = "agent-degraded"
				}
				for name, res := range map[string]int{"node page": node.Doc.Find(`[data-testid="` + badge + `"]`).Length(),
					"status page": status.Doc.Find(`[data-testid="status-node-n1"] [data-testid="` + badge + `"]`).Length(),
					"agents list": agents.Doc.Find(`[data-testid="agent-n1"] [data-testid="` + badge + `"]`).Length()} {
					if res != 1 {
						t.Errorf("%s: %s shows %d %s badges, want 1", when, name, res, badge)
					}
				}
				alert := node.Doc.Find(`[data-testid="agent-sample-error"]`).Text()
				stale := status.Doc.Find(`[data-testid="status-node-n1"] [data-testid="figures-stale"]`)
				staleTable := status.Doc.Find(`[data-testid="status-node-n1"] table.figures-stale`).Length()
				if !degraded && (alert != "" || stale.Length() != 0 || staleTable != 0) {
					t.Errorf("%s: sample alert %q, stale note %q, stale table %d; want none", when, alert, stale.Text(), staleTable)
				}
				if degraded && (!strings.Contains(alert, "Sampling has failed since") || !strings.Contains(alert, "ERROR_GPU_IS_LOST") ||
					!strings.Contains(stale.Text(), "these are the last figures measured, up to") || staleTable != 1) {
					t.Errorf("%s: sample alert %q, stale note %q, stale table %d; want the error, the note and the table marked", when, alert, stale.Text(), staleTable)
				}
			}
			check("sampling works", false)

			lost := func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
			saved := make([]func() (nvml.Memory, nvml.Return), len(x.node.Server.Devices))
			for i, dev := range x.node.Server.Devices {
				saved[i] = dev.(*server.Device).GetMemoryInfoFunc
				dev.(*server.Device).GetMemoryInfoFunc = lost
			}
			for range 3 {
				if err := x.d.SampleOnce(ctx); err == nil {
					t.Fatal("a sample of lost GPUs succeeded")
				}
				x.clock.Add(10 * time.Second)
			}
			check("sampling fails", true)

			for i, dev := range x.node.Server.Devices {
				dev.(*server.Device).GetMemoryInfoFunc = saved[i]
			}
			x.run(10 * time.Second)
			check("sampling works again", false)
		})
	}
}
