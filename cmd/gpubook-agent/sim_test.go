package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/simgpu"
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
	c, err = load("gpu = simulated\nsim_gpus = 4\nsim_model = NVIDIA L40S\nsim_memory_mib = 46068\nsim_script = /tmp/load\nsim_clock_ahead = 45s\n" +
		"sim_mig = 1:7x1g.5gb; 3:3g.20gb,2g.10gb\n")
	if err != nil {
		t.Fatal(err)
	}
	want := simConfig{GPUs: 4, Model: "NVIDIA L40S", MemoryMiB: 46068, Script: "/tmp/load", ClockAhead: 45 * time.Second,
		MIG: simgpu.MIGLayout{1: slices.Repeat([]string{"1g.5gb"}, 7), 3: {"3g.20gb", "2g.10gb"}}}
	if c.GPU != "simulated" || !reflect.DeepEqual(c.Sim, want) {
		t.Errorf("config = %q %+v, want simulated %+v", c.GPU, c.Sim, want)
	}
	for body, want := range map[string]string{
		"gpu = fake\n":                             `gpu = "fake": want nvml or simulated`,
		"sim_gpus = 0\n":                           `sim_gpus = "0": want 1 to 16`,
		"sim_memory_mib = -1\n":                    `sim_memory_mib = "-1": must be positive`,
		"gpu = simulated\nsim_clock_ahead = 61s\n": `sim_clock_ahead = "61s": want 0s to 1m`,
		"gpu = simulated\nsim_clock_ahead = -1s\n": `sim_clock_ahead = "-1s": want 0s to 1m`,
		"sim_clock_ahead = 10s\n":                  `sim_clock_ahead = "10s": only with gpu = simulated`,
		"sim_mig = 0:1g.10gb\n":                    `sim_mig = "0:1g.10gb": only with gpu = simulated`,
		"gpu = simulated\nsim_mig = 0:8x1g.10gb\n": `sim_mig = "0:8x1g.10gb": agent: simgpu: MIG layout of GPU 0: "8x1g.10gb": want a count of 1 to 7 before x`,
	} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error = %v, want %q", body, err, want)
		}
	}
}
