// Package metrics serves /metrics in the Prometheus text format with the
// names, units and labels of NVIDIA's dcgm-exporter, so that existing
// Grafana dashboards work unchanged, plus gpubook_* series for what only the
// agent knows (who holds each GPU, violations, spool, sync).
//
// It writes the text format itself (stdlib only) instead of using
// client_golang: a handful of gauges does not need a registry, and the
// agent stays small. parse_test.go proves the output with Prometheus's own
// text parser (github.com/prometheus/common/expfmt).
package metrics

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// Exporter holds the latest values. The daemon updates it; HTTP reads it.
type Exporter struct {
	hostname string

	mu         sync.Mutex
	snap       sampler.Snapshot
	holders    map[string]wire.Booking // GPU UUID → booking active now
	violations map[string]float64      // kind → total
	counted    map[string]bool         // violation IDs already counted
	spool      spool.Stats
	lastSync   time.Time
	samples    float64
}

// New returns an Exporter that labels every GPU series with hostname.
func New(hostname string) *Exporter {
	return &Exporter{hostname: hostname, holders: map[string]wire.Booking{}, violations: map[string]float64{}, counted: map[string]bool{}}
}

// SetSnapshot records the latest sample and who holds each GPU at its time.
func (e *Exporter) SetSnapshot(snap sampler.Snapshot, bookings []wire.Booking) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.snap = snap
	e.samples++
	e.holders = map[string]wire.Booking{}
	for _, b := range bookings {
		if b.ActiveAt(snap.At) {
			for _, u := range b.GPUUUIDs {
				e.holders[u] = b
			}
		}
	}
}

// AddViolations counts violations by kind, each ID once (escalations and
// final updates of the same episode re-send it).
func (e *Exporter) AddViolations(vs []wire.Violation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.counted) > 100000 { // bound memory; a rare double count is acceptable
		e.counted = map[string]bool{}
	}
	for _, v := range vs {
		if !e.counted[v.ID] {
			e.counted[v.ID] = true
			e.violations[v.Kind]++
		}
	}
}

// SetSpool records the spool's depth, size, drops and set-aside entries.
func (e *Exporter) SetSpool(st spool.Stats) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.spool = st
}

// SetLastSync records the last successful exchange with the portal.
func (e *Exporter) SetLastSync(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lastSync = t
}

// ServeHTTP writes the exposition.
func (e *Exporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_ = e.Write(w)
}

// Write renders every series to w.
func (e *Exporter) Write(w io.Writer) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	e.writeGPU(&b)
	e.writeAgent(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (e *Exporter) gpuLabels(g sampler.GPUState) [][2]string {
	return [][2]string{{"gpu", strconv.Itoa(g.Device.Index)}, {"UUID", g.Device.UUID},
		{"pci_bus_id", g.Device.PCIBusID}, {"device", "nvidia" + strconv.Itoa(g.Device.Minor)},
		{"modelName", g.Device.Model}, {"Hostname", e.hostname}}
}

// migLabels are a MIG instance's labels: its GPU's, plus the instance ids
// as dcgm-exporter names them and the instance's own UUID.
func (e *Exporter) migLabels(g sampler.GPUState, in gpu.MIGInstance) [][2]string {
	return append(e.gpuLabels(g), [2]string{"GPU_I_ID", strconv.Itoa(in.GPUInstanceID)},
		[2]string{"CI_ID", strconv.Itoa(in.ComputeInstanceID)}, [2]string{"MIG_UUID", in.UUID})
}

func (e *Exporter) writeGPU(b *strings.Builder) {
	header(b, "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).")
	for _, g := range e.snap.GPUs {
		if g.UtilValid { // MIG GPUs: no whole-GPU utilisation, so no series
			sample(b, "DCGM_FI_DEV_GPU_UTIL", e.gpuLabels(g), g.UtilPct)
		}
	}
	header(b, "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).")
	for _, g := range e.snap.GPUs {
		sample(b, "DCGM_FI_DEV_FB_USED", e.gpuLabels(g), float64(g.MemUsedMiB))
		for _, in := range g.Instances {
			sample(b, "DCGM_FI_DEV_FB_USED", e.migLabels(g, in), float64(in.MemUsedMiB))
		}
	}
	header(b, "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).")
	for _, g := range e.snap.GPUs {
		sample(b, "DCGM_FI_DEV_FB_FREE", e.gpuLabels(g), float64(max(g.MemTotalMiB-g.MemUsedMiB, 0)))
		for _, in := range g.Instances {
			sample(b, "DCGM_FI_DEV_FB_FREE", e.migLabels(g, in), float64(max(in.MemTotalMiB-in.MemUsedMiB, 0)))
		}
	}
	e.writeHealth(b)
	header(b, "gpubook_gpu_booking_holder", "gauge", "1 for the user whose booking holds the GPU now.")
	for _, g := range e.snap.GPUs {
		if h, ok := e.holders[g.Device.UUID]; ok {
			l := append(e.gpuLabels(g), [2]string{"user", h.User}, [2]string{"booking_id", strconv.FormatInt(h.ID, 10)})
			sample(b, "gpubook_gpu_booking_holder", l, 1)
		}
	}
	header(b, "gpubook_gpu_processes", "gauge", "Processes on the GPU by user.")
	for _, g := range e.snap.GPUs {
		perUser := map[string]int{}
		for _, p := range g.Procs {
			perUser[p.User]++
		}
		for _, u := range sortedKeys(perUser) {
			sample(b, "gpubook_gpu_processes", append(e.gpuLabels(g), [2]string{"user", u}), float64(perUser[u]))
		}
	}
}

func (e *Exporter) writeAgent(b *strings.Builder) {
	host := [][2]string{{"Hostname", e.hostname}}
	header(b, "gpubook_violations_total", "counter", "Violations detected since the agent started, by kind.")
	for _, k := range []string{wire.ViolationUnbooked, wire.ViolationOverstay, wire.ViolationMemoryNoProcess, wire.ViolationRefused} {
		sample(b, "gpubook_violations_total", append(host, [2]string{"kind", k}), e.violations[k])
	}
	header(b, "gpubook_spool_depth", "gauge", "Reports waiting on disk for the portal.")
	sample(b, "gpubook_spool_depth", host, float64(e.spool.Depth))
	header(b, "gpubook_spool_bytes", "gauge", "Bytes waiting on disk for the portal.")
	sample(b, "gpubook_spool_bytes", host, float64(e.spool.Bytes))
	header(b, "gpubook_spool_set_aside", "gauge", "Reports the portal refused as invalid (or unreadable), kept aside in the spool directory.")
	sample(b, "gpubook_spool_set_aside", host, float64(e.spool.SetAside))
	header(b, "gpubook_spool_dropped_total", "counter", "Reports dropped at the spool's age or size limit, by kind.")
	for _, k := range []string{"usage", "violations", "idle"} {
		sample(b, "gpubook_spool_dropped_total", append(host, [2]string{"kind", k}), float64(e.spool.Dropped[k]))
	}
	header(b, "gpubook_last_successful_sync_timestamp_seconds", "gauge", "Unix time of the last successful exchange with the portal (0 = never).")
	ts := 0.0
	if !e.lastSync.IsZero() {
		ts = float64(e.lastSync.UnixMilli()) / 1000
	}
	sample(b, "gpubook_last_successful_sync_timestamp_seconds", host, ts)
	header(b, "gpubook_samples_total", "counter", "Sampling cycles completed.")
	sample(b, "gpubook_samples_total", host, e.samples)
}

// writeHealth writes the dcgm-exporter fields dashboards plot beside
// utilisation and memory; a GPU without a reading gets no series.
func (e *Exporter) writeHealth(b *strings.Builder) {
	fields := []struct {
		name, help string
		get        func(sampler.GPUState) gpu.Reading
	}{
		{"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", func(g sampler.GPUState) gpu.Reading { return g.TempC }},
		{"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", func(g sampler.GPUState) gpu.Reading { return g.PowerW }},
		{"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", func(g sampler.GPUState) gpu.Reading { return g.SMClockMHz }},
		{"DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", func(g sampler.GPUState) gpu.Reading { return g.MemClockMHz }},
	}
	for _, f := range fields {
		header(b, f.name, "gauge", f.help)
		for _, g := range e.snap.GPUs {
			if r := f.get(g); r.OK {
				sample(b, f.name, e.gpuLabels(g), r.V)
			}
		}
	}
}

func header(b *strings.Builder, name, typ, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func sample(b *strings.Builder, name string, labels [][2]string, v float64) {
	b.WriteString(name)
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l[0])
		b.WriteString(`="`)
		b.WriteString(escape(l[1]))
		b.WriteByte('"')
	}
	b.WriteString("} ")
	b.WriteString(formatValue(v))
	b.WriteByte('\n')
}

// formatValue writes integral values (timestamps, MiB) without an exponent.
func formatValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// escape applies the text format's label escaping: backslash, quote, newline.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
