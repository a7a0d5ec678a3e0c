package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	c, err = load("gpu = simulated\nsim_gpus = 4\nsim_model = NVIDIA L40S\nsim_memory_mib = 46068\nsim_script = /tmp/load\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := (simConfig{GPUs: 4, Model: "NVIDIA L40S", MemoryMiB: 46068, Script: "/tmp/load"}); c.GPU != "simulated" || c.Sim != want {
		t.Errorf("config = %q %+v, want simulated %+v", c.GPU, c.Sim, want)
	}
	for body, want := range map[string]string{
		"gpu = fake\n":          `gpu = "fake": want nvml or simulated`,
		"sim_gpus = 0\n":        `sim_gpus = "0": want 1 to 16`,
		"sim_memory_mib = -1\n": `sim_memory_mib = "-1": must be positive`,
	} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error = %v, want %q", body, err, want)
		}
	}
}
