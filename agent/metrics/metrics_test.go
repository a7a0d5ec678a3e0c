package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/metrics"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

func TestExposition(t *testing.T) {
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	e := metrics.New("gpu01")
	snap := sampler.Snapshot{At: at, GPUs: []sampler.GPUState{
		{Device: gpu.Device{UUID: "GPU-a", Index: 0, Minor: 0, Model: `NVIDIA "A100"`, PCIBusID: "00000000:07:00.0"}, UtilValid: true, UtilPct: 87, MemUsedMiB: 1000, MemTotalMiB: 40960,
			TempC: gpu.Reading{V: 41, OK: true}, PowerW: gpu.Reading{V: 312.5, OK: true}, SMClockMHz: gpu.Reading{V: 1410, OK: true}, MemClockMHz: gpu.Reading{V: 1215, OK: true},
			Procs: []sampler.Proc{{PID: 1, User: "alice"}, {PID: 2, User: "alice"}}},
		{Device: gpu.Device{UUID: "GPU-b", Index: 1, Minor: 1, Model: "A100", MIG: true}, MemUsedMiB: 50, MemTotalMiB: 40960,
			Instances: []gpu.MIGInstance{{UUID: "MIG-x", GPUInstanceID: 3, ComputeInstanceID: 0, MemUsedMiB: 20, MemTotalMiB: 9728}}},
	}}
	e.SetSnapshot(snap, []wire.Booking{{ID: 7, User: "alice", GPUUUIDs: []string{"GPU-a"}, StartsAt: at, EndsAt: at.Add(time.Hour)}})
	v := wire.Violation{ID: "x", Kind: wire.ViolationUnbooked}
	e.AddViolations([]wire.Violation{v, v}) // an escalation re-sends the same ID
	e.SetSpool(spool.Stats{Depth: 3, Bytes: 4096, SetAside: 2, Dropped: map[string]int64{"usage": 5}})
	e.SetLastSync(at)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	out := string(body)
	labels0 := `gpu="0",UUID="GPU-a",pci_bus_id="00000000:07:00.0",device="nvidia0",modelName="NVIDIA \"A100\"",Hostname="gpu01"`
	tests := []struct {
		name, line string
		present    bool
	}{
		{"util", `DCGM_FI_DEV_GPU_UTIL{` + labels0 + `} 87`, true},
		{"no util series for MIG", `DCGM_FI_DEV_GPU_UTIL{gpu="1"`, false},
		{"fb used MiB", `DCGM_FI_DEV_FB_USED{` + labels0 + `} 1000`, true},
		{"fb free MiB", `DCGM_FI_DEV_FB_FREE{` + labels0 + `} 39960`, true},
		{"MIG memory still reported", `DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",pci_bus_id="",device="nvidia1",modelName="A100",Hostname="gpu01"} 50`, true},
		{"MIG instance memory used", `DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",pci_bus_id="",device="nvidia1",modelName="A100",Hostname="gpu01",GPU_I_ID="3",CI_ID="0",MIG_UUID="MIG-x"} 20`, true},
		{"MIG instance memory free", `DCGM_FI_DEV_FB_FREE{gpu="1",UUID="GPU-b",pci_bus_id="",device="nvidia1",modelName="A100",Hostname="gpu01",GPU_I_ID="3",CI_ID="0",MIG_UUID="MIG-x"} 9708`, true},
		{"holder", `gpubook_gpu_booking_holder{` + labels0 + `,user="alice",booking_id="7"} 1`, true},
		{"processes", `gpubook_gpu_processes{` + labels0 + `,user="alice"} 2`, true},
		{"violations counted once per ID", `gpubook_violations_total{Hostname="gpu01",kind="unbooked_use"} 1`, true},
		{"spool depth", `gpubook_spool_depth{Hostname="gpu01"} 3`, true},
		{"last sync", `gpubook_last_successful_sync_timestamp_seconds{Hostname="gpu01"} 1772460000`, true},
		{"temperature", `DCGM_FI_DEV_GPU_TEMP{` + labels0 + `} 41`, true},
		{"power", `DCGM_FI_DEV_POWER_USAGE{` + labels0 + `} 312.5`, true},
		{"sm clock", `DCGM_FI_DEV_SM_CLOCK{` + labels0 + `} 1410`, true},
		{"mem clock", `DCGM_FI_DEV_MEM_CLOCK{` + labels0 + `} 1215`, true},
		{"no reading, no series", `DCGM_FI_DEV_GPU_TEMP{gpu="1"`, false},
		{"set aside", `gpubook_spool_set_aside{Hostname="gpu01"} 2`, true},
		{"dropped usage", `gpubook_spool_dropped_total{Hostname="gpu01",kind="usage"} 5`, true},
		{"dropped violations", `gpubook_spool_dropped_total{Hostname="gpu01",kind="violations"} 0`, true},
		{"type line", "# TYPE DCGM_FI_DEV_GPU_UTIL gauge", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Contains(out, tt.line); got != tt.present {
				t.Errorf("contains %q = %v, want %v\n%s", tt.line, got, tt.present, out)
			}
		})
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q", ct)
	}
}
