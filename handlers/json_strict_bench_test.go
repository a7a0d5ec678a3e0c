package handlers

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// BenchmarkCheckJSON walks the largest valid usage body the agent API
// takes (15 minutes × 64 GPUs × 11 users, just under wire.MaxBody), the
// body scripts/agentload posts; allocs/op is the figure to watch, since
// every allocation of the walk is garbage the server carries until the
// next collection.
func BenchmarkCheckJSON(b *testing.B) {
	body := maxUsageBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if p := checkJSON(body, usageShape); p != nil {
			b.Fatalf("fault %d at %q", p.fault, p.field)
		}
	}
}

func maxUsageBody(b *testing.B) []byte {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	batch := wire.UsageBatch{Node: "load", BatchID: "load-1"}
	for m := range 15 {
		for g := range wire.MaxNodeGPUs {
			util := 55.5
			r := wire.UsageRecord{GPUUUID: fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", g), Minute: start.Add(time.Duration(m) * time.Minute),
				UtilAvgPct: &util, UtilMaxPct: &util, MemUsedMiB: 40000, MemTotalMiB: 81559, Samples: 6}
			for u := range 11 {
				r.Users = append(r.Users, wire.UserUsage{User: fmt.Sprintf("user%04d", u), UID: 2000 + u, MemoryMiB: 1000, Processes: 2, Busy: true})
			}
			batch.Records = append(batch.Records, r)
		}
	}
	raw, err := json.Marshal(batch)
	if err != nil || len(raw) > wire.MaxBody {
		b.Fatalf("body of %d bytes: %v", len(raw), err)
	}
	return raw
}
