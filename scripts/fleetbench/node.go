package main

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/models"
)

// A simulated node has nodeGPUs GPUs and three users, as the issue asks:
// the first holds a booking of GPUs 0–3 and keeps them busy, the second
// a booking of GPUs 4–5 that it leaves idle (reported once idle for the
// agent's IdleAfter), the third runs on GPU 7, which nobody booked, for
// episodeOn in every episodeEvery (a violation when it starts and its
// last sighting when it ends). GPU 6 is free.
const (
	nodeGPUs     = 8
	gpuModel     = "NVIDIA H100 80GB HBM3"
	gpuMemoryMiB = 81559
	busyFrom     = 0
	busyGPUs     = 4
	idleFrom     = 4
	idleGPUs     = 2
	freeGPU      = 6
	rogueGPU     = 7
	episodeEvery = time.Hour
	episodeOn    = 10 * time.Minute
)

// workload is what a node's GPUs show: its three users' processes.
type workload struct {
	users [3]string // unix logins: busy, idle, rogue
	uids  [3]int
	phase time.Duration // where in episodeEvery the node's episode starts
}

func (w *workload) pid(g int) int { return 4000 + g }

// rogueOn reports whether the unbooked process runs at t.
func (w *workload) rogueOn(t time.Time) bool {
	return (time.Duration(t.UnixNano())+w.phase)%episodeEvery < episodeOn
}

// source is the node's gpu.Source: go-nvml's answers, made up.
type source struct {
	devices []gpu.Device
	w       *workload
	now     func() time.Time
}

func newSource(name string, w *workload, now func() time.Time) *source {
	s := &source{w: w, now: now}
	for i := range nodeGPUs {
		s.devices = append(s.devices, gpu.Device{UUID: models.PlaceholderUUID(name, i), Index: i, Minor: i, Model: gpuModel,
			MemoryMiB: gpuMemoryMiB, PCIBusID: fmt.Sprintf("00000000:%02X:00.0", 0x10+i)})
	}
	return s
}

func (s *source) Devices(context.Context) ([]gpu.Device, error) { return s.devices, nil }

func (s *source) Sample(context.Context) ([]gpu.Sample, error) {
	t := s.now()
	out := make([]gpu.Sample, len(s.devices))
	for i, d := range s.devices {
		smp := gpu.Sample{UUID: d.UUID, UtilValid: true, MemTotalMiB: d.MemoryMiB}
		busy := i >= busyFrom && i < busyFrom+busyGPUs
		if busy || i == rogueGPU && s.w.rogueOn(t) {
			smp.UtilPct = float64(60 + (t.Second()+7*i)%35)
			smp.MemUsedMiB = 30000 + int64(i)*1000
			smp.Processes = []gpu.Process{{PID: s.w.pid(i), MemMiB: smp.MemUsedMiB - 500}}
		}
		out[i] = smp
	}
	return out, nil
}

// owners answers the sampler's and the detector's questions about the
// made-up processes (procfs.Resolver's part of the real agent).
type owners struct{ w *workload }

func (o owners) UID(pid int) (int, error) {
	switch g := pid - 4000; {
	case g >= busyFrom && g < busyFrom+busyGPUs:
		return o.w.uids[0], nil
	case g == rogueGPU:
		return o.w.uids[2], nil
	}
	return 0, procfs.ErrGone
}

func (o owners) UserName(uid int) string {
	for i, u := range o.w.uids {
		if u == uid {
			return o.w.users[i]
		}
	}
	return fmt.Sprint(uid)
}

func (o owners) UserGroups(string) []string        { return nil }
func (o owners) StartTime(pid int) (uint64, error) { return uint64(pid), nil }

// quiet is the detector's terminal notifier and signaller: the real
// agent's default (enforce = detect) warns the user's terminals, which a
// simulated node has none of.
type quiet struct{}

func (quiet) Notify(int, string, string) error { return nil }
func (quiet) Signal(int, syscall.Signal) error { return nil }
