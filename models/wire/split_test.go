package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSplitUsage: every part is a valid batch under the body limit, no
// user is lost, and a minute that fits is not cut.
func TestSplitUsage(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	rec := func(gpu, users, nameLen int) UsageRecord {
		r := UsageRecord{GPUUUID: "GPU-" + strconv.Itoa(gpu), Minute: t0, MemTotalMiB: 1, Samples: 1}
		for u := range users {
			r.Users = append(r.Users, UserUsage{User: strings.Repeat("<", nameLen-4) + strconv.Itoa(1000+u)})
		}
		return r
	}
	many := func(gpus, users, nameLen int) []UsageRecord {
		var out []UsageRecord
		for g := range gpus {
			out = append(out, rec(g, users, nameLen))
		}
		return out
	}
	tests := []struct {
		name    string
		recs    []UsageRecord
		batches int
	}{
		{"a normal minute is one batch", many(8, 2, 8), 1},
		{"1,500 records", many(1500, 0, 4), 2},
		{"150 users on one GPU", many(1, 150, 8), 3},
		{"64 GPUs of 64 long, escaped names", many(64, 64, 256), 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := SplitUsage(tt.recs)
			users := map[string]bool{}
			for i, p := range parts {
				b := UsageBatch{Node: strings.Repeat("n", 256), BatchID: strings.Repeat("b", 256), Records: p}
				raw, _ := json.Marshal(b)
				if err := b.Validate(); err != nil || len(raw) > MaxBody {
					t.Errorf("batch %d: %d bytes, %v", i, len(raw), err)
				}
				for _, r := range p {
					for _, u := range r.Users {
						users[r.GPUUUID+u.User] = true
					}
				}
			}
			want := 0
			for _, r := range tt.recs {
				want += len(r.Users)
			}
			if len(parts) != tt.batches || len(users) != want {
				t.Errorf("%d batches with %d users, want %d with %d", len(parts), len(users), tt.batches, want)
			}
		})
	}
}

// TestSplitIdleBoundsGPUs: idle reports are cut into batches of at most
// MaxIdleGPUsPerBatch GPUs in all, in order, none lost, each valid.
func TestSplitIdleBoundsGPUs(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	var gpus []string
	for g := range MaxGPUs {
		gpus = append(gpus, "GPU-"+strconv.Itoa(g))
	}
	var rs []IdleReport
	for i := range 40 {
		rs = append(rs, IdleReport{ID: strconv.Itoa(i), BookingID: 7, User: "alice", GPUUUIDs: gpus, IdleSince: t0, ReportedAt: t0})
	}
	parts := SplitIdle(rs)
	var ids []string
	for i, p := range parts {
		if err := (&IdleBatch{Node: "n1", Reports: p}).Validate(); err != nil {
			t.Errorf("part %d: %v", i, err)
		}
		for _, r := range p {
			ids = append(ids, r.ID)
		}
	}
	if len(parts) != 3 || len(parts[0]) != MaxIdleGPUsPerBatch/MaxGPUs || len(ids) != len(rs) {
		t.Fatalf("%d parts, the first of %d reports, %d reports in all; want 3, %d, %d", len(parts), len(parts[0]), len(ids), MaxIdleGPUsPerBatch/MaxGPUs, len(rs))
	}
	for i, id := range ids {
		if id != rs[i].ID {
			t.Fatalf("report %d is %s, want %s", i, id, rs[i].ID)
		}
	}
}
