package views

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// TestGPUCountsAgree: English says "1 GPU" and "5 GPUs" in mail and on
// pages; Chinese counts with 块 either way.
func TestGPUCountsAgree(t *testing.T) {
	b := i18n.MustLoad()
	tests := []struct {
		lang, key string
		kv        []any
		want      string
	}{
		{"en", "common.gpu_count", []any{"Count", 1}, "1 GPU"},
		{"en", "common.gpu_count", []any{"Count", 5}, "5 GPUs"},
		{"zh-CN", "common.gpu_count", []any{"Count", 5}, "5 块 GPU"},
		{"en", "home.stats", []any{"Nodes", 1, "GPUs", 1}, "1 node, 1 GPU."},
		{"en", "home.stats", []any{"Nodes", 2, "GPUs", 16}, "2 nodes, 16 GPUs."},
		{"en", "admin.node_added", []any{"Name", "gpu01", "Count", 1}, "Node gpu01 added with 1 GPU."},
		{"en", "admin.gpus_count", []any{"Count", 8, "Out", 0}, "8 GPUs, 0 out of service"},
		{"en", "cal.node_free", []any{"Free", 0, "Count", 1}, "0 of 1 GPU free"},
		{"en", "email.idle_what", []any{"Count", 1, "Node", "gpu01", "Since", "10:00"}, "Your booking of 1 GPU on gpu01 has shown no use (under 5 % utilisation, no process) since 10:00."},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.key, func(t *testing.T) {
			if got := b.For(tt.lang).T(tt.key, tt.kv...); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	for v, want := range map[int64]string{1: "1 GPU", 4: "4 GPUs"} {
		if got := (&Page{T: b.For("en")}).ValueLabel(models.RuleMaxGPUs, v); got != want {
			t.Errorf("ValueLabel(%d GPUs) = %q, want %q", v, got, want)
		}
	}
	if got := (&Page{T: b.For("en")}).Tr("policy.unit.gpus"); got != "GPUs" {
		t.Errorf("unit without a count = %q, want GPUs", got)
	}
	start := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	for n, want := range map[int]string{1: "gpu01 · 1 GPU · ", 5: "gpu01 · 5 GPUs · "} {
		bk := &models.Booking{NodeName: "gpu01", GPUIDs: make([]int64, n), StartsAt: start, EndsAt: start.Add(time.Hour)}
		_, text, _, err := RenderEmail(testEnv("en"), "reminder_start", models.Notice{Booking: bk})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, want) {
			t.Errorf("reminder for %d GPUs lacks %q:\n%s", n, want, text)
		}
	}
}

// TestPeakDaysListedAsTheLanguageDoes: weekday lists use the Chinese
// enumeration comma in zh-CN, never an ASCII comma.
func TestPeakDaysListedAsTheLanguageDoes(t *testing.T) {
	b := i18n.MustLoad()
	peak := models.PeakSchedule{Enabled: true, Days: [7]bool{time.Monday: true, time.Wednesday: true, time.Friday: true}, From: 9 * 60, To: 19 * 60}
	for lang, want := range map[string]string{"en": "Mon, Wed, Fri 09:00–19:00", "zh-CN": "周一、周三、周五 09:00–19:00"} {
		p := &Page{T: b.For(lang), Location: time.UTC}
		if got := p.PeakLabel(peak); got != want {
			t.Errorf("%s: %q, want %q", lang, got, want)
		}
	}
}
