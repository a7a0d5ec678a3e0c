package store_test

import (
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// migWeek fills db with one A100 (g1) beside a GPU split in MIG mode (g2)
// with one 1g.10gb instance (f.gpus[2], weight 1/7), and erin's week
// 2026-W49 on them:
//
//	erin slice Tue 10–17, util 80 %     7 h of a 1/7 unit = 1 GPU-hour booked, 1 busy
//	erin g1    Wed 10–11, util 80 %     1 GPU-hour booked, 1 busy
//	erin slice Thu 10:00–10:07 unbooked 7 minutes of a 1/7 unit = 1 GPU-minute
func migWeek(t *testing.T, db *store.DB) (erin int64) {
	f := &reportFixture{t: t, db: db}
	f.node(2)
	erin = f.user("erin")
	f.exec("UPDATE gpus SET mig = ?, mig_slices = 7 WHERE id = ?", true, f.gpus[1])
	var slice int64
	err := db.Gorm.Raw(`INSERT INTO gpus (node_id, idx, uuid, model, memory_mib, mig, in_service, created_at, updated_at,
		parent_id, mig_profile, mig_slices, mig_gi, mig_ci, weight)
		SELECT node_id, 64, 'MIG-aaaaaaaa-0000-0000-0000-000000000001', model, 9856, ?, ?, created_at, updated_at,
		id, '1g.10gb', 1, 7, 0, ? FROM gpus WHERE id = ? RETURNING id`,
		true, true, models.MIGWeight(1, 7), f.gpus[1]).Scan(&slice).Error
	if err != nil {
		t.Fatal(err)
	}
	f.gpus = append(f.gpus, slice)
	f.book(erin, models.StatusConfirmed, local(31, 10, 0), local(31, 17, 0), 2)
	f.use(2, local(31, 10, 0), local(31, 17, 0), 80, "erin", erin, 4096)
	f.book(erin, models.StatusConfirmed, local(32, 10, 0), local(32, 11, 0), 0)
	f.use(0, local(32, 10, 0), local(32, 11, 0), 80, "erin", erin, 4096)
	f.use(2, local(33, 10, 0), local(33, 10, 7), 80, "erin", erin, 4096)
	return erin
}

// TestReportMIGSliceHours: an hour of a MIG instance counts as its weight
// in GPU-hours in every figure (booked, busy, unbooked, the cluster's),
// read from the minutes and from the hourly rollups alike, while the
// utilisation stays per unit; the capacity counts physical GPUs.
func TestReportMIGSliceHours(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		erin := migWeek(t, db)
		// Utilisation is per unit: 420 + 60 booked minutes at 80 %.
		want := models.Figures{BookedSec: 2 * 3600, BusyMin: 120, UnbookedMin: 1, UtilMin: 480, UtilTenths: 480 * 800}
		for _, read := range []string{"minutes", "rollups"} {
			if read == "rollups" {
				roll(t, db, models.DefaultReportRules.BusyUtilPct)
			}
			d := reportWeek(t, db, "2026-W49")
			if got := d.WeekFigures(erin); got != want {
				t.Errorf("%s: erin got %+v, want %+v", read, got, want)
			}
			if tue := d.DaysOf(erin)[1].Figures; tue.BookedSec != 3600 || tue.BusyMin != 60 {
				t.Errorf("%s: erin's Tuesday %+v, want 1 GPU-hour booked and busy", read, tue)
			}
			s := d.ClusterSummary()
			if s.GPUCount != 2 || s.Booked.BookedSec != 2*3600 || s.Booked.BusyMin != 120 || !near(s.ClusterBusyHours, 121.0/60) {
				t.Errorf("%s: cluster %+v", read, s)
			}
			if !near(erin7(d, erin), 2+1.5/60) {
				t.Errorf("%s: erin charged %v GPU-hours, want 2 busy + 1 unbooked minute at 1.5", read, erin7(d, erin))
			}
		}
	})
}

// erin7 is erin's charged hours of the week under the default rules.
func erin7(d *models.WeekData, erin int64) float64 {
	return d.WeekFigures(erin).ChargedHours(models.DefaultReportRules)
}
