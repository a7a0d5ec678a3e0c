package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestReportWeekAtFreezesLazily: an ended week nobody reported is computed
// afresh (not stored) until FreezeAfter has passed; then its first read
// freezes it, in the cluster's zone (a DST week keeps its 169 hours).
func TestReportWeekAtFreezesLazily(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		berlin, _ := time.LoadLocation("Europe/Berlin")
		w, err := models.ParseWeek("2026-W43", berlin) // ends on the night clocks go back
		if err != nil {
			t.Fatal(err)
		}
		// The portal has data in the week: a week before a portal's first
		// booking or usage is never frozen (TestWeekBeforePortal).
		ann := &models.User{Email: "ann@example.org", Name: "Ann"}
		if err := db.CreateUser(ctx, ann, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		gpus, _ := models.NewNodeGPUs("n1", 1, "NVIDIA A100-SXM4-80GB", 81920)
		node := &models.Node{Name: "n1"}
		if err := db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		n, err := db.Node(ctx, node.ID)
		if err != nil {
			t.Fatal(err)
		}
		start := w.Start.Add(24 * time.Hour)
		if _, err := db.CreateBooking(ctx, models.NewBooking{UserID: ann.ID, GPUIDs: []int64{n.GPUs[0].ID}, StartsAt: start, EndsAt: start.Add(time.Hour)},
			models.DefaultBookingLimits, start.Add(-time.Hour), models.CLIActor); err != nil {
			t.Fatal(err)
		}
		count := func() (n int64) {
			if err := db.Gorm.Table("report_weeks").Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, tc := range []struct {
			name  string
			now   time.Time
			want  models.WeekState
			saved int64
		}{
			{"in progress", w.End.Add(-time.Hour), models.WeekInProgress, 0},
			{"ended a day ago", w.End.Add(24 * time.Hour), models.WeekEnded, 0},
			{"ended a week ago", w.End.Add(models.FreezeAfter), models.WeekFrozen, 1},
			{"read again", w.End.Add(30 * 24 * time.Hour), models.WeekFrozen, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				d, err := db.ReportWeekAt(ctx, w, tc.now, models.ReportRules{}, false)
				if err != nil {
					t.Fatal(err)
				}
				if d.State != tc.want || count() != tc.saved {
					t.Errorf("state %v, %d saved; want %v, %d", d.State, count(), tc.want, tc.saved)
				}
				if got := d.Week.End.Sub(d.Week.Start); got != 169*time.Hour || d.Week.Start.Location() != berlin {
					t.Errorf("week of %v in %v", got, d.Week.Start.Location())
				}
			})
		}
	})
}
