package web_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// TestReportMIGSliceOnEverySurface: beside alice's 2-hour booking of a
// whole GPU (reportEnv, busy 1 h), she books a 1g.10gb slice of GPU 1 for
// seven hours on Tuesday and is busy on it all along: every surface (her
// page, its figures and days CSV, the cluster CSV) counts that as 1
// GPU-hour booked and busy, 3 and 2 in all; the split GPU is one GPU of
// the capacity.
func TestReportMIGSliceOnEverySurface(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env, root, alice, _, _ := reportEnv(t, d)
			migSliceWeek(t, env)
			res := alice.Get("/usage?week=2026-W49")
			want := map[string]string{"GPU-hours booked": "3.0", "GPU-hours busy": "2.0"}
			for label, v := range want {
				if got := figureValue(res, label); got != v {
					t.Errorf("page: %s = %q, want %q", label, got, v)
				}
			}
			figures := csvRows(t, alice, "/usage?week=2026-W49&format=csv&table=figures")
			for _, r := range figures {
				if v, ok := want[r[0]]; ok && r[1] != v {
					t.Errorf("figures CSV: %s = %q, want %q", r[0], r[1], v)
				}
				if v := figureValue(res, r[0]); len(r) > 1 && v != "" && v != r[1] {
					t.Errorf("figures CSV and page disagree on %s: %q and %q", r[0], r[1], v)
				}
			}
			days := csvRows(t, alice, "/usage?week=2026-W49&format=csv&table=days")
			if got := strings.Join(days[2], "|"); got != "Tue 12-01|1.0|1.0|100%" {
				t.Errorf("days CSV: Tuesday %q, want 1 GPU-hour booked and busy", got)
			}
			cluster := csvRows(t, root, "/admin/usage?week=2026-W49&format=csv&table=cluster")
			wantCluster := map[string]string{"GPUs in service": "2", "GPU-hours booked": "3.0", "GPU-hours busy": "2.0",
				"GPU-hours busy in the cluster (booked or not)": "2.0"}
			seen := 0
			for _, r := range cluster {
				if v, ok := wantCluster[r[0]]; ok {
					seen++
					if r[1] != v {
						t.Errorf("cluster CSV: %s = %q, want %q", r[0], r[1], v)
					}
				}
			}
			if seen != len(wantCluster) {
				t.Errorf("cluster CSV has %d of the %d rows looked for: %v", seen, len(wantCluster), cluster)
			}
		})
	}
}

// migSliceWeek splits GPU 1 of n1 into one 1g.10gb instance (weight 1/7)
// and gives alice seven busy hours on it on Tuesday 1 December.
func migSliceWeek(t *testing.T, env *webtest.Env) {
	t.Helper()
	env.SplitMIG("n1", map[int][]string{1: {"1g.10gb"}})
	ctx := context.Background()
	a, _ := env.DB.UserByEmail(ctx, "alice@example.org")
	var slice int64
	must(t, env.DB.Gorm.Raw(`SELECT id FROM gpus WHERE parent_id IS NOT NULL`).Scan(&slice).Error)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	from := time.Date(2026, 12, 1, 10, 0, 0, 0, berlin).UTC()
	to := from.Add(7 * time.Hour)
	exec := func(q string, args ...any) { must(t, env.DB.Gorm.Exec(q, args...).Error) }
	var id int64
	must(t, env.DB.Gorm.Raw(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, created_at, updated_at)
		VALUES (?, (SELECT MIN(id) FROM nodes), ?, ?, ?, ?) RETURNING id`, a.ID, from, to, from, from).Scan(&id).Error)
	exec(`INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at) VALUES (?, ?, ?, ?)`, id, slice, from, to)
	for m := from; m.Before(to); m = m.Add(time.Minute) {
		exec(`INSERT INTO gpu_usage_minutes (gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples)
			VALUES (?, ?, NULL, NULL, 4000, 9856, 60)`, slice, m)
		exec(`INSERT INTO gpu_user_usage_minutes (gpu_id, minute, user_name, user_id, memory_mib, processes, busy)
			VALUES (?, ?, 'alice', ?, 4000, 1, TRUE)`, slice, m, a.ID)
	}
	must(t, env.DB.RestampUsage(ctx, from.Add(-time.Hour), to.Add(time.Hour)))
	if w, err := env.DB.GPUs(ctx); err != nil || len(w) != 3 {
		t.Fatalf("gpus: %d, %v", len(w), err)
	}
}

func csvRows(t *testing.T, c *webtest.Client, path string) [][]string {
	t.Helper()
	res := c.Get(path)
	rows, err := csv.NewReader(strings.NewReader(res.Body.String())).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %d, %v", path, res.Code, err)
	}
	return rows
}
