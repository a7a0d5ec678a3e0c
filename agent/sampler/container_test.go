package sampler_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

func cid(c string) string { return strings.Repeat(c, 64) }

// TestUsageNamesTheContainer: each user's minute names the container that
// held most of their GPU memory in any one sample (the smaller id among
// equals), whatever the order of the samples; "" when none of their
// processes ran in one.
func TestUsageNamesTheContainer(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	type proc struct {
		user      string
		mem       int64
		container string
	}
	samples := [][]proc{
		{{"alice", 500, cid("a")}, {"bob", 700, ""}, {"root", 500, cid("b")}, {"root", 300, cid("c")}, {"carol", 9000, ""}, {"carol", 10, cid("d")},
			{"dave", 400, cid("f")}, {"dave", 400, cid("e")}},
		{{"alice", 800, cid("a")}, {"bob", 700, ""}, {"root", 100, cid("b")}, {"root", 600, cid("c")}, {"carol", 9000, ""}},
		{{"alice", 100, cid("a")}, {"root", 500, cid("b")}, {"root", 50, cid("b")}},
	}
	want := map[string]string{"alice": cid("a"), "bob": "", "root": cid("c"), "carol": cid("d"), "dave": cid("e")}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		agg := sampler.NewAggregator(5, time.Time{})
		for i, s := range order {
			g := sampler.GPUState{Device: gpu.Device{UUID: "GPU-1"}, UtilValid: true, UtilPct: 50, MemTotalMiB: 40960}
			for j, p := range samples[s] {
				g.Procs = append(g.Procs, sampler.Proc{PID: 100 + j, User: p.user, MemMiB: p.mem, Container: p.container})
			}
			agg.Add(sampler.Snapshot{At: t0.Add(time.Duration(i) * 10 * time.Second), GPUs: []sampler.GPUState{g}})
		}
		recs := agg.Flush()
		if len(recs) != 1 {
			t.Fatalf("records = %d, want 1", len(recs))
		}
		got := map[string]string{}
		for _, u := range recs[0].Users {
			got[u.User] = u.Container
		}
		for user, w := range want {
			if got[user] != w {
				t.Errorf("samples in order %v: %s's container = %.12q, want %.12q", order, user, got[user], w)
			}
		}
		b := wire.UsageBatch{Node: "n", BatchID: "1", Records: recs}
		if err := b.Validate(); err != nil {
			t.Errorf("batch with containers refused: %v", err)
		}
	}
}

// TestSampleReadsTheContainer: the sampler reads each GPU process's
// container from /proc/PID/cgroup.
func TestSampleReadsTheContainer(t *testing.T) {
	f := newFixture(t)
	f.procs.Add(t, 100, agenttest.UIDRoot)
	f.procs.Add(t, 200, agenttest.UIDAlice)
	id := cid("7")
	cgroup := "0::/system.slice/docker-" + id + ".scope\n"
	if err := os.WriteFile(filepath.Join(f.procs.Root, strconv.Itoa(100), "cgroup"), []byte(cgroup), 0o644); err != nil {
		t.Fatal(err)
	}
	session := "0::/user.slice/user-1001.slice/session-3.scope\n"
	if err := os.WriteFile(filepath.Join(f.procs.Root, strconv.Itoa(200), "cgroup"), []byte(session), 0o644); err != nil {
		t.Fatal(err)
	}
	f.node.Set(0, agenttest.GPUState{Util: 80, UsedMiB: 9000, Procs: []agenttest.Proc{{PID: 100, MemMiB: 8000}, {PID: 200, MemMiB: 1000}}})
	snap, err := f.s.Sample(context.Background(), time.Date(2026, 3, 2, 14, 0, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := []sampler.Proc{{PID: 100, UID: 0, User: "root", MemMiB: 8000, Container: id}, {PID: 200, UID: agenttest.UIDAlice, User: "alice", MemMiB: 1000}}
	if got := snap.GPUs[0].Procs; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("procs = %+v, want %+v", got, want)
	}
}
