package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// reportWeekData gives ann a 2-hour booking two weeks ago (Shanghai time),
// busy for its first hour; ben has nothing. It returns that week.
func reportWeekData(t *testing.T, url string) models.Week {
	t.Helper()
	mustGpubook(t, url, "user", "add", "--email", "ann@example.org", "--name", "Ann")
	mustGpubook(t, url, "user", "add", "--email", "ben@example.org", "--name", "Ben", "--language", "zh-CN")
	mustGpubook(t, url, "node", "add", "--name", "n1", "--gpus", "1", "--model", "A100", "--memory-mib", "81920")
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	w := models.WeekOf(time.Now(), shanghai).Prev(2)
	db := storetest.OpenURL(t, url)
	from := w.Start.Add(34 * time.Hour).UTC() // Tuesday 10:00
	exec := func(q string, args ...any) {
		if err := db.Gorm.Exec(q, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, created_at, updated_at)
		VALUES ((SELECT id FROM users WHERE email = 'ann@example.org'), (SELECT MIN(id) FROM nodes), ?, ?, ?, ?)`, from, from.Add(2*time.Hour), from, from)
	exec(`INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at) VALUES ((SELECT MIN(id) FROM bookings), (SELECT MIN(id) FROM gpus), ?, ?)`,
		from, from.Add(2*time.Hour))
	for m := 0; m < 60; m++ {
		exec(`INSERT INTO gpu_usage_minutes (gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples)
			VALUES ((SELECT MIN(id) FROM gpus), ?, 90, 90, 0, 81920, 60)`, from.Add(time.Duration(m)*time.Minute))
		exec(`INSERT INTO gpu_user_usage_minutes (gpu_id, minute, user_name, user_id, memory_mib, processes, busy)
			VALUES ((SELECT MIN(id) FROM gpus), ?, 'ann', (SELECT id FROM users WHERE email = 'ann@example.org'), 4000, 1, TRUE)`,
			from.Add(time.Duration(m)*time.Minute))
	}
	if err := db.RestampUsage(context.Background(), from.Add(-time.Hour), from.Add(3*time.Hour)); err != nil { // rows written around the store
		t.Fatal(err)
	}
	return w
}

func TestReportPreviewAndSend(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		w := reportWeekData(t, url)
		out := mustGpubook(t, url, "report", "preview", "--email", "ann@example.org", "--week", w.String())
		for _, want := range []string{"Your GPU usage, week " + w.String(), "Hello Ann,", "GPU-hours booked", "2.0", "Efficiency", "50%",
			"Fair-share factor", "/usage?week=" + w.String(), "/profile#email", "/usage/definitions"} {
			if !strings.Contains(out, want) {
				t.Errorf("preview lacks %q:\n%s", want, out)
			}
		}
		quiet := mustGpubook(t, url, "report", "preview", "--email", "ben@example.org", "--week", w.String())
		if !strings.Contains(quiet, "没有什么可报告的") || strings.Contains(quiet, "GPU-hours booked") {
			t.Errorf("ben's preview should be the short friendly one, in Chinese:\n%s", quiet)
		}
		first := mustGpubook(t, url, "report", "send", "--week", w.String())
		if !strings.Contains(first, "2 users, 2 reports queued now, 0 already queued") {
			t.Errorf("first send: %q", first)
		}
		again := mustGpubook(t, url, "report", "send", "--week", w.String())
		if !strings.Contains(again, "0 reports queued now, 2 already queued") {
			t.Errorf("second send: %q", again)
		}
		var n int64
		storetest.OpenURL(t, url).Gorm.Table("outbox").Where("dedup_key LIKE ?", "report:"+w.String()+":user:%").Count(&n)
		if n != 2 {
			t.Errorf("%d report rows in the outbox, want 2", n)
		}
		if _, _, err := gpubook(t, url, "report", "send", "--week", models.WeekOf(time.Now(), time.UTC).Next().String()); err == nil {
			t.Error("sending a week that is not over should fail")
		}
		if _, _, err := gpubook(t, url, "report", "preview", "--email", "ann@example.org", "--week", "2026-49"); err == nil || !strings.Contains(err.Error(), "2026-W49") {
			t.Errorf("bad week: %v", err)
		}
		if _, _, err := gpubook(t, url, "report", "preview", "--email", "ann@example.org", "--week", "2026-49"); err == nil || strings.HasPrefix(err.Error(), "cli:") {
			t.Errorf("bad week: %v, want a message for people, without the internal cli: prefix", err)
		}
		if _, _, err := gpubook(t, url, "report", "preview"); err == nil || err.Error() != "report preview: --email is required" {
			t.Errorf("no --email: %v", err)
		}
	})
}

func TestReportRulesFromEnv(t *testing.T) {
	t.Parallel()
	r, err := reportRules(envOf(map[string]string{"GPUBOOK_REPORT_BUSY_UTIL_PCT": "10", "GPUBOOK_REPORT_UNBOOKED_WEIGHT": "1.5", "GPUBOOK_REPORT_SCHEDULE": "tue 09:30"}))
	if err != nil || r.BusyUtilPct != 10 || r.UnbookedWeight != 1.5 || r.Schedule != (models.Schedule{Weekday: time.Tuesday, Hour: 9, Minute: 30}) {
		t.Errorf("got %+v, %v", r, err)
	}
	for k, v := range map[string]string{"GPUBOOK_REPORT_BUSY_UTIL_PCT": "120", "GPUBOOK_REPORT_UNBOOKED_WEIGHT": "0", "GPUBOOK_REPORT_SCHEDULE": "monday"} {
		if _, err := reportRules(envOf(map[string]string{k: v})); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}
