package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/daemon"
)

func TestAgoNeverNegative(t *testing.T) {
	now := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"never", time.Time{}, "never"},
		{"past", now.Add(-90 * time.Second), "1m30s ago"},
		{"now", now, "0s ago"},
		{"a moment ahead", now.Add(1500 * time.Millisecond), "just now"},
		{"clock ahead", now.Add(40 * time.Second), "just now (by a clock 40s ahead of this one)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ago(now, tt.t); got != tt.want {
				t.Errorf("ago = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStatusUnderSimulatedClockAhead: the status file's times are on the
// simulated node's clock (sim_clock_ahead); status reads them on that
// clock, so no age is negative, and says since when samples fail.
func TestStatusUnderSimulatedClockAhead(t *testing.T) {
	host := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	cfg := config{GPU: "simulated"}
	cfg.Sim.ClockAhead = 50 * time.Second
	sim := host.Add(cfg.Sim.ClockAhead)
	st := daemon.Status{Node: "sim1", At: sim.Add(-2 * time.Second), LastSync: sim.Add(-5 * time.Second), ScheduleAt: sim.Add(-5 * time.Second),
		SampleError: "nvml: GPU is lost", SampleFailingSince: sim.Add(-2 * time.Minute)}
	var out bytes.Buffer
	if err := printStatus(&out, st, daemonNow(cfg, host)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sampled 2s ago", "last sync 5s ago", "SAMPLE ERROR since 2m0s ago: nvml: GPU is lost"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
	if regexp.MustCompile(`-[0-9][0-9hms.]*s ago`).MatchString(out.String()) {
		t.Errorf("status prints a negative age:\n%s", out.String())
	}
	if got := daemonNow(config{GPU: "nvml"}, host); !got.Equal(host) {
		t.Errorf("daemonNow on real GPUs = %s, want the host's %s", got, host)
	}
}
