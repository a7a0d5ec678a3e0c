package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// TestWeekBacklogFitsTheBodyLimit: a week of usage spooled while the
// portal is unreachable, on a node with 8 busy GPUs and, once a day, a
// minute far beyond any real node (64 GPUs, 100 users each with long
// names) and a burst of 1,200 violations, drains as batches that are each
// under wire.MaxBody and valid, and deliver every user-minute once.
func TestWeekBacklogFitsTheBodyLimit(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	dir := memDir(t)
	sp, err := spool.Open(filepath.Join(dir, "spool"), spool.Limits{MaxAge: 30 * 24 * time.Hour, MaxBytes: 4 << 30},
		func() time.Time { return t0 }, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{cfg: Config{Node: "big-node", WatermarkPath: filepath.Join(dir, "watermark.json")},
		deps: Deps{Spool: sp}, log: slog.New(slog.DiscardHandler)}
	want := map[string]bool{}
	const week = 7 * 24 * 60
	for m := range week {
		gpus, users, nameLen := 8, 2, 8
		if m%1440 == 0 {
			gpus, users, nameLen = 64, 100, 200
		}
		recs := minuteRecords(t0.Add(time.Duration(m)*time.Minute), gpus, users, nameLen, want)
		if err := d.spoolUsage(recs); err != nil {
			t.Fatalf("minute %d: %v", m, err)
		}
	}
	var ev detect.Events
	for i := range 1200 {
		ev.Violations = append(ev.Violations, wire.Violation{ID: fmt.Sprintf("v%d-%s", i, strings.Repeat("x", 200)),
			Kind: wire.ViolationUnbooked, GPUUUID: gpuUUID(i % 8), User: strings.Repeat("u", 250), UID: 1000, PID: 1 + i,
			FirstSeen: t0, LastSeen: t0, Action: wire.ActionWarned})
	}
	if err := d.spoolEvents(ev); err != nil {
		t.Fatal(err)
	}

	got, violations, batches, largest := map[string]bool{}, 0, 0, 0
	_, err = sp.Drain(context.Background(), func(_ context.Context, e spool.Entry) error {
		batches++
		largest = max(largest, len(e.Body))
		if len(e.Body) > wire.MaxBody {
			t.Fatalf("batch %d is %d bytes, over the %d-byte limit", e.Seq, len(e.Body), wire.MaxBody)
		}
		switch e.Kind {
		case wire.PathUsage:
			var b wire.UsageBatch
			if err := json.Unmarshal(e.Body, &b); err != nil || b.Validate() != nil {
				t.Fatalf("batch %d: %v / %v", e.Seq, err, b.Validate())
			}
			for _, r := range b.Records {
				for _, u := range r.Users {
					got[userMinute(r, u)] = true
				}
			}
		case wire.PathViolations:
			var b wire.ViolationBatch
			if err := json.Unmarshal(e.Body, &b); err != nil || b.Validate() != nil {
				t.Fatalf("batch %d: %v / %v", e.Seq, err, b.Validate())
			}
			violations += len(b.Violations)
		}
		return nil
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || violations != 1200 {
		t.Errorf("delivered %d user-minutes and %d violations, want %d and 1200", len(got), violations, len(want))
	}
	t.Logf("%d batches, the largest %d bytes (limit %d)", batches, largest, wire.MaxBody)
}

func gpuUUID(i int) string { return fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", i) }

func userMinute(r wire.UsageRecord, u wire.UserUsage) string {
	return r.GPUUUID + "|" + r.Minute.Format(time.RFC3339) + "|" + u.User
}

// minuteRecords is one minute of usage, noted in want per user.
func minuteRecords(m time.Time, gpus, users, nameLen int, want map[string]bool) []wire.UsageRecord {
	recs := make([]wire.UsageRecord, gpus)
	for g := range recs {
		util := 50.0
		recs[g] = wire.UsageRecord{GPUUUID: gpuUUID(g), Minute: m, UtilAvgPct: &util, UtilMaxPct: &util,
			MemUsedMiB: 1000, MemTotalMiB: 81920, Samples: 6}
		for u := range users {
			name := fmt.Sprintf("%0*d", nameLen, u)
			recs[g].Users = append(recs[g].Users, wire.UserUsage{User: name, UID: 1000 + u, MemoryMiB: 10, Processes: 1, Busy: true})
			want[userMinute(recs[g], recs[g].Users[u])] = true
		}
	}
	return recs
}

// memDir is a scratch directory in memory where there is one: the week is
// 10,000 spool files, each synced to disk, which on a disk takes minutes.
func memDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "gpubook-backlog-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
