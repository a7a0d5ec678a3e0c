package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConfigSimulated(t *testing.T) {
	load := func(body string) (config, error) {
		p := filepath.Join(t.TempDir(), "c")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return loadConfig(p, func(string) string { return "" })
	}
	c, err := load("")
	if err != nil || c.GPU != "nvml" {
		t.Fatalf("default gpu = %q, %v; want nvml", c.GPU, err)
	}
	c, err = load("gpu = simulated\nsim_gpus = 4\nsim_model = NVIDIA L40S\nsim_memory_mib = 46068\nsim_script = /tmp/load\nsim_clock_ahead = 45s\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := (simConfig{GPUs: 4, Model: "NVIDIA L40S", MemoryMiB: 46068, Script: "/tmp/load", ClockAhead: 45 * time.Second}); c.GPU != "simulated" || c.Sim != want {
		t.Errorf("config = %q %+v, want simulated %+v", c.GPU, c.Sim, want)
	}
	for body, want := range map[string]string{
		"gpu = fake\n":                             `gpu = "fake": want nvml or simulated`,
		"sim_gpus = 0\n":                           `sim_gpus = "0": want 1 to 16`,
		"sim_memory_mib = -1\n":                    `sim_memory_mib = "-1": must be positive`,
		"gpu = simulated\nsim_clock_ahead = 61s\n": `sim_clock_ahead = "61s": want 0s to 1m`,
		"gpu = simulated\nsim_clock_ahead = -1s\n": `sim_clock_ahead = "-1s": want 0s to 1m`,
		"sim_clock_ahead = 10s\n":                  `sim_clock_ahead = "10s": only with gpu = simulated`,
	} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error = %v, want %q", body, err, want)
		}
	}
}
