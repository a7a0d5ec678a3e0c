package views

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// Mail is what the domain's jobs render through: each message in its
// recipient's language, with the key the caller chose, and the admin's
// unmapped-use section only when the domain hands one over.
func TestMailRendersForTheDomain(t *testing.T) {
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	m := &Mail{I18n: i18n.MustLoad(), BaseURL: "https://gpubook.example.org", Location: shanghai}
	wang := &models.User{ID: 4, Email: "wang@example.org", Name: "王磊", Language: "zh-CN"}

	t.Run("notice", func(t *testing.T) {
		start := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
		bk := &models.Booking{NodeName: "gpu01", GPUIDs: []int64{1}, StartsAt: start, EndsAt: start.Add(time.Hour)}
		got, err := m.Notice(models.Notice{Kind: "reminder_start", Booking: bk}, wang)
		if err != nil {
			t.Fatal(err)
		}
		if got.Kind != "reminder_start" || got.Lang != "zh-CN" || !strings.Contains(got.TextBody, "09:00") {
			t.Errorf("reminder = %+v", got)
		}
	})
	t.Run("idle warning", func(t *testing.T) {
		r := models.IdleReport{ID: 7, NodeName: "gpu01", BookingID: 3, UserID: 4, GPUUUIDs: []string{"GPU-a"}}
		got, err := m.IdleWarning(wang, "idle:report:7", r, models.IdlePolicy{AutoRelease: true, Grace: 30 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if got.DedupKey != "idle:report:7" || got.Lang != "zh-CN" || got.ToEmail != wang.Email || !strings.Contains(got.TextBody, "30 分钟") {
			t.Errorf("idle warning = %+v", got)
		}
	})
	t.Run("node offline", func(t *testing.T) {
		seen := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		got, err := m.NodeOffline(wang, "offline:node:1", models.AgentNode{NodeID: 1, NodeName: "gpu01", LastSeenAt: &seen})
		if err != nil {
			t.Fatal(err)
		}
		if got.DedupKey != "offline:node:1" || got.Lang != "zh-CN" || !strings.Contains(got.Subject, "gpu01") {
			t.Errorf("offline alert = %+v", got)
		}
	})
	t.Run("weekly report", func(t *testing.T) {
		w, err := models.ParseWeek("2026-W49", shanghai)
		if err != nil {
			t.Fatal(err)
		}
		r := models.UserReport{User: *wang, Week: w}
		plain, err := m.WeeklyReport(*wang, w, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		if plain.DedupKey != "report:2026-W49:user:4" || plain.UnsubscribeURL != "https://gpubook.example.org/profile#email" ||
			strings.Contains(plain.TextBody, "/admin/usage") {
			t.Errorf("report without unmapped use = %+v", plain)
		}
		admin, err := m.WeeklyReport(*wang, w, r, []models.UnixMinutes{{Name: "bob", Minutes: 600}})
		if err != nil {
			t.Fatal(err)
		}
		if want := "https://gpubook.example.org/admin/usage?week=2026-W49"; !strings.Contains(admin.TextBody, want) || !strings.Contains(admin.HTMLBody, want) {
			t.Errorf("admin's report lacks %s:\n%s", want, admin.TextBody)
		}
		if text := m.WeeklyReportText(*wang, w, r); !strings.Contains(text, "https://gpubook.example.org/usage?week=2026-W49") {
			t.Errorf("preview lacks the week's link:\n%s", text)
		}
	})
}
