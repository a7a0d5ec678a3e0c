package sampler_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

// snapshots samples the node every 10 s from 14:00:05 to 14:02:55 while
// utilisation, memory and processes change at every sample.
func snapshots(t *testing.T, f *fixture, t0 time.Time) []sampler.Snapshot {
	t.Helper()
	f.procs.Add(t, 100, agenttest.UIDAlice)
	f.procs.Add(t, 200, agenttest.UIDBob)
	// Two containers of root's: which one a minute names depends on every
	// sample so far, so the saved minute must carry it.
	for pid, id := range map[int]string{300: cid("a"), 301: cid("b")} {
		f.procs.Add(t, pid, agenttest.UIDRoot)
		if err := os.WriteFile(filepath.Join(f.procs.Root, strconv.Itoa(pid), "cgroup"), []byte("0::/system.slice/docker-"+id+".scope\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out []sampler.Snapshot
	for i := range 18 {
		f.node.Set(0, agenttest.GPUState{Util: uint32(i * 7 % 100), UsedMiB: int64(1000 + 100*i), Procs: []agenttest.Proc{{PID: 100, MemMiB: int64(100 * i)}}})
		procs := []agenttest.Proc{{PID: 200, MemMiB: 300}}
		if i%4 == 0 {
			procs = append(procs, agenttest.Proc{PID: 100, MemMiB: 50})
		}
		f.node.Set(1, agenttest.GPUState{Util: uint32(i % 3), UsedMiB: 350, Procs: procs})
		f.node.Set(2, agenttest.GPUState{MIG: true, UsedMiB: int64(10 * i)})
		f.node.Set(3, agenttest.GPUState{Util: 50, UsedMiB: 1000, Procs: []agenttest.Proc{{PID: 300, MemMiB: int64(90 * i % 400)}, {PID: 301, MemMiB: 250}}})
		snap, err := f.s.Sample(context.Background(), t0.Add(5*time.Second+time.Duration(i)*10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, snap)
	}
	return out
}

// TestCheckpointResumesExactly: a process killed after any sample and
// restarted on its saved minute (and the watermark of what it spooled)
// emits the very records an uninterrupted one does — no minute lost or
// sent twice, no sample of the minute in progress lost — wherever the
// kill falls around a minute boundary.
func TestCheckpointResumesExactly(t *testing.T) {
	f := newFixture(t)
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	snaps := snapshots(t, f, t0)
	ref := sampler.NewAggregator(5, time.Time{})
	var want []wire.UsageRecord
	for _, s := range snaps {
		want = append(want, ref.Add(s)...)
	}
	want = append(want, ref.Flush()...)
	for kill := range snaps {
		path := filepath.Join(t.TempDir(), "minute.json")
		var got []wire.UsageRecord
		var watermark time.Time
		emit := func(rs []wire.UsageRecord) {
			for _, r := range rs {
				got = append(got, r)
				watermark = r.Minute
			}
		}
		a := sampler.NewAggregator(5, time.Time{})
		for _, s := range snaps[:kill+1] {
			emit(a.Add(s))
			if err := a.Save(path); err != nil {
				t.Fatal(err)
			}
		}
		// kill -9: a is gone without Flush; a new process starts before the next sample.
		b := sampler.NewAggregator(5, watermark)
		if err := b.Load(path); err != nil {
			t.Fatal(err)
		}
		restart := snaps[kill].At.Add(5 * time.Second)
		emit(b.Complete(restart))
		for _, s := range snaps[kill+1:] {
			emit(b.Add(s))
		}
		emit(b.Flush())
		if !reflect.DeepEqual(got, want) {
			t.Errorf("killed after the sample at %s: records differ from an uninterrupted run\n got %d: %+v\nwant %d: %+v",
				snaps[kill].At.Format("15:04:05"), len(got), got, len(want), want)
		}
	}
}

// TestCheckpointLoad: a restart long after the crash finishes the saved
// minute at once; a minute the watermark covers is not loaded again; a
// missing file is nothing, a damaged one an error.
func TestCheckpointLoad(t *testing.T) {
	f := newFixture(t)
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	snaps := snapshots(t, f, t0)
	path := filepath.Join(t.TempDir(), "minute.json")
	a := sampler.NewAggregator(5, time.Time{})
	for _, s := range snaps[:3] {
		a.Add(s)
	}
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}

	b := sampler.NewAggregator(5, time.Time{})
	if err := b.Load(path); err != nil {
		t.Fatal(err)
	}
	if got := b.Pending(); !got.Equal(t0) {
		t.Errorf("Pending = %v, want %v", got, t0)
	}
	if got := b.Complete(t0.Add(59 * time.Second)); len(got) != 0 {
		t.Errorf("Complete within the saved minute = %d records, want 0 (it resumes)", len(got))
	}
	done := b.Complete(t0.Add(time.Hour))
	if len(done) != 8 || done[0].Minute != t0 || done[0].Samples != 3 {
		t.Errorf("Complete an hour later = %d records (first %+v), want 8 of minute %v with 3 samples", len(done), done, t0)
	}
	if !b.Pending().IsZero() {
		t.Errorf("Pending after Complete = %v, want none", b.Pending())
	}

	c := sampler.NewAggregator(5, t0) // the previous run spooled 14:00 before dying
	if err := c.Load(path); err != nil {
		t.Fatal(err)
	}
	if got := c.Flush(); len(got) != 0 {
		t.Errorf("loaded a spooled minute again: %d records", len(got))
	}

	if err := sampler.NewAggregator(5, time.Time{}).Load(filepath.Join(t.TempDir(), "none.json")); err != nil {
		t.Errorf("missing file: %v, want nil", err)
	}
	if err := os.WriteFile(path, []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sampler.NewAggregator(5, time.Time{}).Load(path); err == nil {
		t.Error("damaged file: nil error")
	}
}
