package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// TestAgentRefusedOpenShown: the agent reports that the lock refused alice
// GPU 3 (cgroup2 counts refused opens); the node's status page flags GPU 3
// with "tried GPU 3 without a booking" and her name, and her own page lists
// it, in English and in Chinese. A resend with a later last_seen (she
// tried again) updates the one row.
func TestAgentRefusedOpenShown(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := enrolledE2E(t, d)
			ctx := context.Background()
			x.env.AddUser("alice@example.org", "Alice", false)
			at := x.clock.Now()
			v := wire.Violation{ID: "n1:refused_open:" + x.node.UUID(3) + ":1001:1", Kind: wire.ViolationRefused,
				GPUUUID: x.node.UUID(3), User: "alice", UID: 1001, FirstSeen: at, LastSeen: at, Action: wire.ActionNone}
			again := v
			again.LastSeen = at.Add(30 * time.Second)
			for i, vs := range []wire.Violation{v, again} {
				b := wire.ViolationBatch{Node: "n1", BatchID: "n1-r" + itoa64(int64(i)), Violations: []wire.Violation{vs}}
				if err := x.client.PostJSON(ctx, wire.PathViolations, b); err != nil {
					t.Fatal(err)
				}
			}
			vs, err := telemetry.New(x.env.DB).Violations(ctx, models.ViolationFilter{})
			if err != nil || len(vs) != 1 || !vs[0].LastSeen.Equal(again.LastSeen) || vs[0].UserID == 0 || vs[0].GPUIndex != 3 {
				t.Fatalf("violations = %+v, %v; want alice's one refused open of GPU 3", vs, err)
			}
			x.clock.Add(time.Minute)
			for lang, want := range map[string]string{"en": "tried GPU 3 without a booking", "zh-CN": "未预订却尝试使用 GPU 3"} {
				alice := x.env.Client()
				alice.Header.Set("Accept-Language", lang)
				alice.SignIn("alice@example.org", "Alice")
				status := alice.Get("/status")
				row := status.Doc.Find(`[data-testid="status-gpu-` + itoa64(x.gpuIDs(3)[0]) + `"]`)
				flag := strings.TrimSpace(row.Find(`[data-testid="flag-violation"]`).Text())
				if status.Code != 200 || !row.HasClass("row-violation") || !strings.Contains(flag, want) || !strings.HasSuffix(flag, "Alice (alice)") {
					t.Errorf("%s: status row of GPU 3: %d %q, flag %q; want %q with Alice (alice)", lang, status.Code, row.Text(), flag, want)
				}
				mine := alice.Get("/violations/mine")
				kind := strings.TrimSpace(mine.Doc.Find(`[data-testid="violation-kind"]`).Text())
				user := strings.TrimSpace(mine.Doc.Find(`[data-testid="violation-user"]`).Text())
				if mine.Code != 200 || mine.Doc.Find(`[data-testid="violations"] tbody tr`).Length() != 1 ||
					kind != want || user != "Alice (alice)" {
					t.Errorf("%s: /violations/mine: %d, kind %q, user %q; want one row %q by Alice (alice)", lang, mine.Code, kind, user, want)
				}
			}
		})
	}
}
