package daemon_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

// BenchmarkSamplingCycle8GPUs is one 10 s cycle's work on an 8-GPU node
// with two processes per GPU: NVML reads (go-nvml's simulated DGX A100, so
// this measures the agent, not the driver), /proc lookups, aggregation and
// detection against 100 bookings.
func BenchmarkSamplingCycle8GPUs(b *testing.B) {
	node := agenttest.NewNode(b)
	procs := agenttest.NewProcs(b)
	var bookings []wire.Booking
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	for i := range 8 {
		p1, p2 := 1000+2*i, 1001+2*i
		procs.Add(b, p1, agenttest.UIDAlice)
		procs.Add(b, p2, agenttest.UIDBob)
		node.Set(i, agenttest.GPUState{Util: uint32(10 * i), UsedMiB: 8000, Procs: []agenttest.Proc{{PID: p1, MemMiB: 4000}, {PID: p2, MemMiB: 4000}}})
	}
	for i := range 100 {
		bookings = append(bookings, wire.Booking{ID: int64(i + 1), User: "alice", GPUUUIDs: []string{node.UUID(i % 8)},
			StartsAt: t0.Add(time.Duration(i-50) * time.Hour), EndsAt: t0.Add(time.Duration(i-49) * time.Hour)})
	}
	be, err := nvmlgpu.Open(node.Server)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	devs, _ := be.Devices(context.Background())
	res := procfs.New(procs.Root, procs.Passwd, procs.Group)
	s := sampler.New(be, res, devs, nil)
	agg := sampler.NewAggregator(5, time.Time{})
	det := detect.New("n1", detect.DefaultPolicy(), nil, nil, res, nil)
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		snap, err := s.Sample(context.Background(), now)
		if err != nil {
			b.Fatal(err)
		}
		agg.Add(snap)
		det.Observe(snap, bookings)
		now = now.Add(10 * time.Second)
	}
	b.StopTimer()
	// Memory after many cycles: the heap the agent's state keeps, and the
	// resident size of the whole test process (an upper bound: it includes
	// the test framework and the simulated NVML).
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-inuse-MiB")
	b.ReportMetric(residentMiB(), "rss-MiB")
}

// residentMiB reads VmRSS from /proc/self/status (0 where there is none).
func residentMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
