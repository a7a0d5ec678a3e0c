package metrics_test

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/metrics"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// TestExpositionParses: every family has its declared type, and the values
// a scrape would store are the exporter's, label values that need escaping
// (quote, backslash, newline) included.
func TestExpositionParses(t *testing.T) {
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	e := metrics.New(`gpu"01\x`)
	snap := sampler.Snapshot{At: at, GPUs: []sampler.GPUState{
		{Device: gpu.Device{UUID: "GPU-a", Index: 0, Model: "NVIDIA A100\nSXM"}, UtilValid: true, UtilPct: 12.5, MemUsedMiB: 10, MemTotalMiB: 40960,
			TempC: gpu.Reading{V: 40, OK: true}, Procs: []sampler.Proc{{PID: 1, User: "bob"}}},
		{Device: gpu.Device{UUID: "GPU-b", Index: 1, Minor: 1, Model: "A100", MIG: true}, MemUsedMiB: 5, MemTotalMiB: 40960,
			Instances: []gpu.MIGInstance{{UUID: "MIG-x", GPUInstanceID: 1, MemUsedMiB: 2, MemTotalMiB: 9728}}},
	}}
	e.SetSnapshot(snap, []wire.Booking{{ID: 9, User: "bob", GPUUUIDs: []string{"GPU-a"}, StartsAt: at, EndsAt: at.Add(time.Hour)}})
	e.AddViolations([]wire.Violation{{ID: "v", Kind: wire.ViolationOverstay}})
	e.SetSpool(spool.Stats{Depth: 4, Dropped: map[string]int64{"idle": 2}})
	e.SetLastSync(at.Add(1500 * time.Millisecond))
	fams, _ := scrape(t, e)
	types := map[string]dto.MetricType{
		"DCGM_FI_DEV_GPU_UTIL": dto.MetricType_GAUGE, "DCGM_FI_DEV_FB_USED": dto.MetricType_GAUGE,
		"gpubook_violations_total": dto.MetricType_COUNTER, "gpubook_spool_dropped_total": dto.MetricType_COUNTER,
		"gpubook_samples_total": dto.MetricType_COUNTER, "gpubook_spool_depth": dto.MetricType_GAUGE,
	}
	for name, want := range types {
		if f := fams[name]; f == nil || f.GetType() != want {
			t.Errorf("%s: family %v, want type %v", name, f, want)
		}
	}
	host := map[string]string{"Hostname": `gpu"01\x`}
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"DCGM_FI_DEV_GPU_UTIL", map[string]string{"UUID": "GPU-a", "modelName": "NVIDIA A100\nSXM", "Hostname": `gpu"01\x`}, 12.5},
		{"DCGM_FI_DEV_FB_FREE", map[string]string{"UUID": "GPU-a"}, 40950},
		{"DCGM_FI_DEV_FB_USED", map[string]string{"MIG_UUID": "MIG-x", "GPU_I_ID": "1"}, 2},
		{"gpubook_gpu_booking_holder", map[string]string{"UUID": "GPU-a", "user": "bob", "booking_id": "9"}, 1},
		{"gpubook_gpu_processes", map[string]string{"UUID": "GPU-a", "user": "bob"}, 1},
		{"gpubook_violations_total", map[string]string{"kind": wire.ViolationOverstay}, 1},
		{"gpubook_violations_total", map[string]string{"kind": wire.ViolationUnbooked}, 0},
		{"gpubook_spool_depth", host, 4},
		{"gpubook_spool_dropped_total", map[string]string{"kind": "idle"}, 2},
		{"gpubook_last_successful_sync_timestamp_seconds", host, float64(at.Unix()) + 1.5},
		{"gpubook_samples_total", host, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := find(fams[tt.name], tt.labels)
			if m == nil {
				t.Fatalf("no %s sample with %v", tt.name, tt.labels)
			}
			if got := value(m); got != tt.want {
				t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
			}
		})
	}
	if m := find(fams["DCGM_FI_DEV_GPU_UTIL"], map[string]string{"UUID": "GPU-b"}); m != nil {
		t.Errorf("a MIG GPU has a whole-GPU utilisation sample: %v", m)
	}
}

// find returns the family's sample whose labels include want.
func find(f *dto.MetricFamily, want map[string]string) *dto.Metric {
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}
