package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
)

// TestAgentIdleWarnsOncePerBooking: a batch of several idle reports of one
// booking sends its owner one warning, not one per report, and marks every
// report of the batch warned.
func TestAgentIdleWarnsOncePerBooking(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := newMemFixture(t, d)
			bt := wire.IdleBatch{Node: "load"}
			for i := range 3 {
				bt.Reports = append(bt.Reports, wire.IdleReport{ID: fmt.Sprintf("warn-%d", i), BookingID: x.booking, User: "load",
					GPUUUIDs: []string{memUUID(i)}, IdleSince: e2eT0.Add(-time.Hour), ReportedAt: e2eT0})
			}
			body, _ := json.Marshal(bt)
			rec := httptest.NewRecorder()
			x.env.Server.Echo.ServeHTTP(rec, x.request(memBody{path: wire.PathIdle}, body))
			if rec.Code != http.StatusNoContent {
				t.Fatalf("idle: %d %s", rec.Code, rec.Body.String())
			}
			var mails, warned, reports int64
			x.env.DB.Gorm.Table("outbox").Count(&mails)
			x.env.DB.Gorm.Table("agent_idle_reports").Count(&reports)
			x.env.DB.Gorm.Table("agent_idle_reports").Where("warned_at IS NOT NULL").Count(&warned)
			if mails != 1 || reports != 3 || warned != 3 {
				t.Errorf("mails = %d, reports = %d, warned = %d; want 1, 3, 3", mails, reports, warned)
			}
		})
	}
}
