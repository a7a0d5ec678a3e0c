// Package metrics serves /metrics with the names, units and labels of
// NVIDIA's dcgm-exporter, so that existing Grafana dashboards work
// unchanged, plus gpubook_* series for what only the agent knows (who holds
// each GPU, violations, spool, sync). The Exporter keeps the latest values
// and is a client_golang collector over them, served by promhttp, as the
// portal's metrics are.
package metrics

import (
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// Exporter holds the latest values. The daemon updates it; HTTP reads it.
type Exporter struct {
	hostname string
	handler  http.Handler // promhttp over a registry holding only the Exporter

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
	e := &Exporter{hostname: hostname, holders: map[string]wire.Booking{}, violations: map[string]float64{}, counted: map[string]bool{}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e) // unchecked (see Describe): cannot fail
	e.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return e
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

// ServeHTTP serves the exposition through promhttp, as the portal does.
func (e *Exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.handler.ServeHTTP(w, r)
}

// Describe declares nothing, which makes the Exporter an unchecked
// collector: DCGM_FI_DEV_FB_USED and _FREE carry a GPU's labels and, for a
// MIG instance, three more, and a checked collector may not declare one
// name with two label sets.
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

// Collect turns the latest values into constant metrics at scrape time.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.collectGPU(ch)
	e.collectAgent(ch)
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

func (e *Exporter) collectGPU(ch chan<- prometheus.Metric) {
	util := gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).")
	used := gauge("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).")
	free := gauge("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).")
	holder := gauge("gpubook_gpu_booking_holder", "1 for the user whose booking holds the GPU now.")
	procs := gauge("gpubook_gpu_processes", "Processes on the GPU by user.")
	for _, g := range e.snap.GPUs {
		if g.UtilValid { // MIG GPUs: no whole-GPU utilisation, so no series
			util.add(ch, e.gpuLabels(g), g.UtilPct)
		}
		used.add(ch, e.gpuLabels(g), float64(g.MemUsedMiB))
		free.add(ch, e.gpuLabels(g), float64(max(g.MemTotalMiB-g.MemUsedMiB, 0)))
		for _, in := range g.Instances {
			used.add(ch, e.migLabels(g, in), float64(in.MemUsedMiB))
			free.add(ch, e.migLabels(g, in), float64(max(in.MemTotalMiB-in.MemUsedMiB, 0)))
		}
		if h, ok := e.holders[g.Device.UUID]; ok {
			holder.add(ch, append(e.gpuLabels(g), [2]string{"user", h.User}, [2]string{"booking_id", strconv.FormatInt(h.ID, 10)}), 1)
		}
		perUser := map[string]int{}
		for _, p := range g.Procs {
			perUser[p.User]++
		}
		for _, u := range sortedKeys(perUser) {
			procs.add(ch, append(e.gpuLabels(g), [2]string{"user", u}), float64(perUser[u]))
		}
	}
	e.collectHealth(ch)
}

func (e *Exporter) collectAgent(ch chan<- prometheus.Metric) {
	host := [][2]string{{"Hostname", e.hostname}}
	violations := counter("gpubook_violations_total", "Violations detected since the agent started, by kind.")
	for _, k := range []string{wire.ViolationUnbooked, wire.ViolationOverstay, wire.ViolationMemoryNoProcess, wire.ViolationRefused} {
		violations.add(ch, append(host, [2]string{"kind", k}), e.violations[k])
	}
	gauge("gpubook_spool_depth", "Reports waiting on disk for the portal.").add(ch, host, float64(e.spool.Depth))
	gauge("gpubook_spool_bytes", "Bytes waiting on disk for the portal.").add(ch, host, float64(e.spool.Bytes))
	gauge("gpubook_spool_set_aside", "Reports the portal refused as invalid (or unreadable), kept aside in the spool directory.").
		add(ch, host, float64(e.spool.SetAside))
	dropped := counter("gpubook_spool_dropped_total", "Reports dropped at the spool's age or size limit, by kind.")
	for _, k := range []string{"usage", "violations", "idle"} {
		dropped.add(ch, append(host, [2]string{"kind", k}), float64(e.spool.Dropped[k]))
	}
	ts := 0.0
	if !e.lastSync.IsZero() {
		ts = float64(e.lastSync.UnixMilli()) / 1000
	}
	gauge("gpubook_last_successful_sync_timestamp_seconds", "Unix time of the last successful exchange with the portal (0 = never).").
		add(ch, host, ts)
	counter("gpubook_samples_total", "Sampling cycles completed.").add(ch, host, e.samples)
}

// collectHealth sends the dcgm-exporter fields dashboards plot beside
// utilisation and memory; a GPU without a reading gets no series.
func (e *Exporter) collectHealth(ch chan<- prometheus.Metric) {
	fields := []struct {
		f   family
		get func(sampler.GPUState) gpu.Reading
	}{
		{gauge("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."), func(g sampler.GPUState) gpu.Reading { return g.TempC }},
		{gauge("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."), func(g sampler.GPUState) gpu.Reading { return g.PowerW }},
		{gauge("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz)."), func(g sampler.GPUState) gpu.Reading { return g.SMClockMHz }},
		{gauge("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz)."), func(g sampler.GPUState) gpu.Reading { return g.MemClockMHz }},
	}
	for _, f := range fields {
		for _, g := range e.snap.GPUs {
			if r := f.get(g); r.OK {
				f.f.add(ch, e.gpuLabels(g), r.V)
			}
		}
	}
}

// family is one metric name with its help and type; add emits a sample.
type family struct {
	name, help string
	typ        prometheus.ValueType
}

func gauge(name, help string) family   { return family{name, help, prometheus.GaugeValue} }
func counter(name, help string) family { return family{name, help, prometheus.CounterValue} }

// add sends one sample; labels become the Desc's constant labels, so each
// sample keeps its own set. A label value that is not UTF-8 fails this
// sample alone: promhttp serves the rest (ContinueOnError).
func (f family) add(ch chan<- prometheus.Metric, labels [][2]string, v float64) {
	ls := make(prometheus.Labels, len(labels))
	for _, l := range labels {
		ls[l[0]] = l[1]
	}
	d := prometheus.NewDesc(f.name, f.help, nil, ls)
	m, err := prometheus.NewConstMetric(d, f.typ, v)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	ch <- m
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
