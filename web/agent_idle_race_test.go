package web_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
)

// TestAgentIdleBatchesInParallel: 16 idle batches of one booking at once,
// each naming the same 200 reports in an order of its own, as a node
// resending its spool from several processes would. On PostgreSQL their
// row locks crossed (40P01: the batch answered 500, or its reports stayed
// unmarked while the owner was warned); now every batch is stored and
// every report ends up marked warned.
func TestAgentIdleBatchesInParallel(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := newMemFixture(t, d)
			const reports, batches = 200, 16
			bodies := make([][]byte, batches)
			for b := range bodies {
				bt := wire.IdleBatch{Node: "load"}
				for _, i := range rand.New(rand.NewPCG(uint64(b), 1)).Perm(reports) {
					bt.Reports = append(bt.Reports, wire.IdleReport{ID: fmt.Sprintf("race-%03d", i), BookingID: x.booking, User: "load",
						GPUUUIDs: []string{memUUID(i % 64)}, IdleSince: e2eT0.Add(-time.Hour), ReportedAt: e2eT0.Add(time.Duration(b) * time.Second)})
				}
				bodies[b], _ = json.Marshal(bt)
			}
			codes := make([]int, batches)
			var wg sync.WaitGroup
			for b := range batches {
				wg.Go(func() {
					rec := httptest.NewRecorder()
					x.env.Server.Echo.ServeHTTP(rec, x.request(memBody{path: wire.PathIdle}, bodies[b]))
					codes[b] = rec.Code
				})
			}
			wg.Wait()
			for b, code := range codes {
				if code != http.StatusNoContent {
					t.Errorf("batch %d: %d, want 204", b, code)
				}
			}
			var stored, unmarked int64
			x.env.DB.Gorm.Table("agent_idle_reports").Count(&stored)
			x.env.DB.Gorm.Table("agent_idle_reports").Where("warned_at IS NULL").Count(&unmarked)
			if stored != reports || unmarked != 0 {
				t.Errorf("reports stored = %d, unmarked = %d; want %d, 0", stored, unmarked, reports)
			}
		})
	}
}
