package metrics_test

import (
	"maps"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

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
	fams, ct := scrape(t, e)

	gpu0 := map[string]string{"gpu": "0", "UUID": "GPU-a", "pci_bus_id": "00000000:07:00.0", "device": "nvidia0", "modelName": `NVIDIA "A100"`, "Hostname": "gpu01"}
	gpu1 := map[string]string{"gpu": "1", "UUID": "GPU-b", "pci_bus_id": "", "device": "nvidia1", "modelName": "A100", "Hostname": "gpu01"}
	mig := with(gpu1, "GPU_I_ID", "3", "CI_ID", "0", "MIG_UUID", "MIG-x")
	host := map[string]string{"Hostname": "gpu01"}
	tests := []struct {
		name, family string
		labels       map[string]string // the sample's whole label set
		want         float64
		present      bool
	}{
		{"util", "DCGM_FI_DEV_GPU_UTIL", gpu0, 87, true},
		{"no util series for MIG", "DCGM_FI_DEV_GPU_UTIL", gpu1, 0, false},
		{"fb used MiB", "DCGM_FI_DEV_FB_USED", gpu0, 1000, true},
		{"fb free MiB", "DCGM_FI_DEV_FB_FREE", gpu0, 39960, true},
		{"MIG memory still reported", "DCGM_FI_DEV_FB_USED", gpu1, 50, true},
		{"MIG instance memory used", "DCGM_FI_DEV_FB_USED", mig, 20, true},
		{"MIG instance memory free", "DCGM_FI_DEV_FB_FREE", mig, 9708, true},
		{"holder", "gpubook_gpu_booking_holder", with(gpu0, "user", "alice", "booking_id", "7"), 1, true},
		{"no holder for an unbooked GPU", "gpubook_gpu_booking_holder", with(gpu1, "user", "alice", "booking_id", "7"), 0, false},
		{"processes", "gpubook_gpu_processes", with(gpu0, "user", "alice"), 2, true},
		{"violations counted once per ID", "gpubook_violations_total", with(host, "kind", wire.ViolationUnbooked), 1, true},
		{"violations of a kind not seen", "gpubook_violations_total", with(host, "kind", wire.ViolationOverstay), 0, true},
		{"spool depth", "gpubook_spool_depth", host, 3, true},
		{"spool bytes", "gpubook_spool_bytes", host, 4096, true},
		{"last sync", "gpubook_last_successful_sync_timestamp_seconds", host, 1772460000, true},
		{"samples", "gpubook_samples_total", host, 1, true},
		{"temperature", "DCGM_FI_DEV_GPU_TEMP", gpu0, 41, true},
		{"power", "DCGM_FI_DEV_POWER_USAGE", gpu0, 312.5, true},
		{"sm clock", "DCGM_FI_DEV_SM_CLOCK", gpu0, 1410, true},
		{"mem clock", "DCGM_FI_DEV_MEM_CLOCK", gpu0, 1215, true},
		{"no reading, no series", "DCGM_FI_DEV_GPU_TEMP", gpu1, 0, false},
		{"set aside", "gpubook_spool_set_aside", host, 2, true},
		{"dropped usage", "gpubook_spool_dropped_total", with(host, "kind", "usage"), 5, true},
		{"dropped violations", "gpubook_spool_dropped_total", with(host, "kind", "violations"), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := exact(fams[tt.family], tt.labels)
			if got := m != nil; got != tt.present {
				t.Fatalf("%s%v present = %v, want %v", tt.family, tt.labels, got, tt.present)
			}
			if m != nil && value(m) != tt.want {
				t.Errorf("%s%v = %v, want %v", tt.family, tt.labels, value(m), tt.want)
			}
		})
	}
	if got, want := len(fams["DCGM_FI_DEV_FB_USED"].GetMetric()), 3; got != want {
		t.Errorf("DCGM_FI_DEV_FB_USED has %d samples, want %d (two GPUs, one MIG instance)", got, want)
	}
	if f := fams["DCGM_FI_DEV_GPU_UTIL"]; f.GetType() != dto.MetricType_GAUGE || f.GetHelp() != "GPU utilization (in %)." {
		t.Errorf("DCGM_FI_DEV_GPU_UTIL: type %v, help %q", f.GetType(), f.GetHelp())
	}
	if !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q", ct)
	}
}

// scrape serves /metrics as Prometheus asks for it (the text format) and
// parses the answer with Prometheus's strict parser (legacy names).
func scrape(t *testing.T, e *metrics.Exporter) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses the exposition: %v", err)
	}
	return fams, rec.Header().Get("Content-Type")
}

// with returns labels plus the given name, value pairs.
func with(labels map[string]string, kv ...string) map[string]string {
	out := maps.Clone(labels)
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// exact returns the family's sample whose label set is want, no more.
func exact(f *dto.MetricFamily, want map[string]string) *dto.Metric {
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		if maps.Equal(have, want) {
			return m
		}
	}
	return nil
}

// TestInvalidLabelValue: a GPU name that is not UTF-8 loses that GPU's
// samples; the scrape still answers every other series.
func TestInvalidLabelValue(t *testing.T) {
	e := metrics.New("gpu01")
	e.SetSnapshot(sampler.Snapshot{GPUs: []sampler.GPUState{
		{Device: gpu.Device{UUID: "GPU-a", Model: "A100\xff"}, UtilValid: true, UtilPct: 3},
		{Device: gpu.Device{UUID: "GPU-b", Index: 1, Model: "A100"}, UtilValid: true, UtilPct: 4},
	}}, nil)
	fams, _ := scrape(t, e)
	util := fams["DCGM_FI_DEV_GPU_UTIL"].GetMetric()
	if len(util) != 1 || value(util[0]) != 4 {
		t.Errorf("DCGM_FI_DEV_GPU_UTIL = %v, want GPU-b's 4 alone", util)
	}
	if fams["gpubook_samples_total"] == nil {
		t.Error("the agent's own series are missing")
	}
}
