package sampler_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/sampler"
)

// BenchmarkMinuteSave8GPUs is the checkpoint the daemon writes after every
// sample: 8 GPUs with two users each, written atomically with two fsyncs
// (the disk's fsync latency dominates; run it on the node's state disk).
func BenchmarkMinuteSave8GPUs(b *testing.B) {
	node := agenttest.NewNode(b)
	procs := agenttest.NewProcs(b)
	for i := range 8 {
		p1, p2 := 1000+2*i, 1001+2*i
		procs.Add(b, p1, agenttest.UIDAlice)
		procs.Add(b, p2, agenttest.UIDBob)
		node.Set(i, agenttest.GPUState{Util: uint32(10 * i), UsedMiB: 8000, Procs: []agenttest.Proc{{PID: p1, MemMiB: 4000}, {PID: p2, MemMiB: 4000}}})
	}
	s := newSampler(b, node, procs)
	snap, err := s.Sample(context.Background(), time.Date(2026, 3, 2, 14, 0, 5, 0, time.UTC))
	if err != nil {
		b.Fatal(err)
	}
	agg := sampler.NewAggregator(5, time.Time{})
	agg.Add(snap)
	path := filepath.Join(b.TempDir(), "minute.json")
	b.ReportAllocs()
	for b.Loop() {
		if err := agg.Save(path); err != nil {
			b.Fatal(err)
		}
	}
}
