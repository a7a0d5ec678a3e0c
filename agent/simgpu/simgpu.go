// Package simgpu is a node of simulated GPUs (agent.conf: gpu = simulated)
// for demos and end-to-end tests on machines without a GPU. The GPUs are
// go-nvml's simulated devices, read through the real agent/nvmlgpu backend;
// their load follows the node's cached schedule (each booking behaves by
// its ID: train, idle, partial or overrun) plus an optional load script of
// extra processes. Simulated processes have no real PIDs, so the package
// writes a /proc-like tree and passwd/group files for them, which the
// agent's real procfs resolver reads; signals end simulated processes and
// never reach a real one.
package simgpu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/agent/nvmlgpu/migmock"
	"github.com/gpubook/gpubook/models/wire"
)

// Config describes the simulated node.
type Config struct {
	Node      string // seeds the GPU UUIDs: stable across restarts, distinct per node
	GPUs      int    // 1..16; 8 when 0
	Model     string // NVML name; "NVIDIA A100-SXM4-80GB" when ""
	MemoryMiB int64  // per GPU; 81920 when 0
	// Dir receives the simulated proc tree, passwd and group.
	Dir string
	// CachePath is the agent's schedule cache: the bookers' load follows it.
	CachePath string
	// Script is the optional load script (ParseScript), re-read when it changes.
	Script string
	// MIG puts GPUs in MIG mode with the instances given (ParseMIG).
	MIG MIGLayout
	// Host is the host's name service: names it knows keep their UID.
	Host HostUsers
	// DevDir, when set, receives a character device file per GPU with
	// NVIDIA's major (DEVDIR/gpubook-sim/NODE/nvidiaN, 195:N), so that the
	// device lock has real files to guard (see DeviceFiles). Needs root.
	DevDir string
	Now    func() time.Time
}

// Sim is a running simulated node.
type Sim struct {
	cfg    Config
	server *server.Server
	node   Node
	tree   procTree

	mu        sync.Mutex
	state     []devState
	pids      map[string]int // key → PID of the current processes
	byPID     map[int]string
	killed    map[string]bool
	firstSeen map[string]time.Time
	names     map[string]bool
	script    []ScriptLine
	scriptMod time.Time
	bookings  []wire.Booking

	devFiles []string // DeviceFiles
	devErr   error
	migs     []simMIG // the GPUs in MIG mode, by index
	caps     capFiles // their instances' capability files
}

// simMIG is one GPU in MIG mode and its instances.
type simMIG struct {
	gpu       int
	instances []migmock.Instance
}

// New builds the simulated node and its (empty) proc tree.
func New(cfg Config) (*Sim, error) {
	if cfg.GPUs == 0 {
		cfg.GPUs = 8
	}
	if cfg.GPUs < 1 || cfg.GPUs > 16 {
		return nil, fmt.Errorf("agent: simgpu: %d GPUs: want 1 to 16", cfg.GPUs)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	conf := gpus.A100_SXM4_80GB
	if cfg.Model != "" {
		conf.Name = cfg.Model
	}
	if cfg.MemoryMiB > 0 {
		conf.MemoryMB = uint64(cfg.MemoryMiB)
	}
	s := &Sim{cfg: cfg, server: dgxa100.NewWithGPUs(gpus.Multiple(cfg.GPUs, conf)...), state: make([]devState, cfg.GPUs),
		pids: map[string]int{}, byPID: map[int]string{}, killed: map[string]bool{}, firstSeen: map[string]time.Time{}, names: map[string]bool{},
		tree: procTree{dir: cfg.Dir, written: map[int]string{}}}
	s.node.MemoryMiB = int64(conf.MemoryMB)
	s.node.MIG = make([][]Slot, cfg.GPUs)
	for i, d := range s.server.Devices {
		dev := d.(*server.Device)
		dev.UUID = wire.SimulatedGPUUUID(cfg.Node, i)
		s.node.UUIDs = append(s.node.UUIDs, dev.UUID)
		s.script1(i, dev)
	}
	if err := s.setMIG(); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(s.tree.root()); err != nil { // processes of an earlier run are gone
		return nil, fmt.Errorf("agent: simgpu: %w", err)
	}
	if err := os.MkdirAll(s.tree.root(), 0o755); err != nil {
		return nil, fmt.Errorf("agent: simgpu: %w", err)
	}
	if err := s.tree.writeUsers(nil); err != nil {
		return nil, err
	}
	if err := s.writeMIGTable(); err != nil {
		return nil, err
	}
	// Without device files the simulation still runs; only the lock, which
	// asks for them, refuses to start.
	s.devErr = s.makeDeviceFiles()
	return s, nil
}

// setMIG puts the GPUs of cfg.MIG in MIG mode.
func (s *Sim) setMIG() error {
	for i, profiles := range s.cfg.MIG {
		if i >= s.cfg.GPUs {
			return fmt.Errorf("agent: simgpu: MIG layout names GPU %d of a node of %d GPUs", i, s.cfg.GPUs)
		}
		instances, err := migInstances(s.cfg.Node, i, profiles, s.node.MemoryMiB)
		if err != nil {
			return err
		}
		for _, in := range instances {
			s.node.MIG[i] = append(s.node.MIG[i], Slot{UUID: in.UUID, MemoryMiB: in.MemoryMiB})
		}
		s.migs = append(s.migs, simMIG{gpu: i, instances: instances})
		s.scriptMIG(i, s.server.Devices[i].(*server.Device), instances)
	}
	sort.Slice(s.migs, func(a, b int) bool { return s.migs[a].gpu < s.migs[b].gpu })
	return nil
}

// MIGUUID returns the UUID of GPU i's instance j (its place in the layout).
func (s *Sim) MIGUUID(i, j int) string { return s.node.MIG[i][j].UUID }

// ProcRoot, Passwd and Group are what the agent's resolver must read.
func (s *Sim) ProcRoot() string { return s.tree.root() }

// Passwd is the simulated owners' passwd file.
func (s *Sim) Passwd() string { return s.tree.passwd() }

// Group is the simulated owners' group file.
func (s *Sim) Group() string { return s.tree.group() }

// UUID returns GPU i's UUID.
func (s *Sim) UUID(i int) string { return s.node.UUIDs[i] }

// Open is a daemon.OpenSource: the simulated NVML through the real backend,
// with a step of the simulation before every sample.
func (s *Sim) Open(context.Context) (gpu.Source, string, error) {
	b, err := nvmlgpu.Open(s.server)
	if err != nil {
		return nil, "", err
	}
	return source{b: b, sim: s}, b.DriverVersion() + " (simulated)", nil
}

type source struct {
	b   *nvmlgpu.Backend
	sim *Sim
}

func (src source) Devices(ctx context.Context) ([]gpu.Device, error) { return src.b.Devices(ctx) }

func (src source) Sample(ctx context.Context) ([]gpu.Sample, error) {
	if err := src.sim.Step(ctx); err != nil {
		return nil, err
	}
	if err := src.sim.sampleFault(); err != nil {
		return nil, err
	}
	return src.b.Sample(ctx)
}

// Step moves the simulation to now: reads the schedule cache and the
// script, plans the load, and writes the processes' tree and the devices'
// readings.
func (s *Sim) Step(ctx context.Context) error {
	now := s.cfg.Now()
	if f, err := cache.Read(ctx, s.cfg.CachePath, time.Second); err == nil {
		s.bookings = f.Schedule.Bookings // no cache yet: nobody has booked anything
	}
	if err := s.readScript(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var procs []Proc
	for _, p := range Plan(s.node, s.bookings, s.script, s.seen(now), now) {
		if !s.killed[p.Key] {
			procs = append(procs, p)
		}
	}
	s.pids, s.byPID = PIDs(procs), map[int]string{}
	for k, pid := range s.pids {
		s.byPID[pid] = k
	}
	for _, p := range procs {
		s.names[p.User] = true
	}
	names := make([]string, 0, len(s.names))
	for n := range s.names {
		names = append(names, n)
	}
	uids := UIDs(names, s.cfg.Host)
	if err := s.tree.write(procs, s.pids, uids); err != nil {
		return err
	}
	s.setDevices(procs)
	return nil
}

// seen returns firstSeen for Plan, remembering each script process's start.
func (s *Sim) seen(now time.Time) func(string) time.Time {
	return func(k string) time.Time {
		if t, ok := s.firstSeen[k]; ok {
			return t
		}
		s.firstSeen[k] = now
		return now
	}
}

// readScript re-reads the load script when it changed; a script process
// that was signalled comes back only when the script is edited.
func (s *Sim) readScript() error {
	if s.cfg.Script == "" {
		return nil
	}
	st, err := os.Stat(s.cfg.Script)
	if errors.Is(err, os.ErrNotExist) {
		s.setScript(nil, time.Time{})
		return nil
	}
	if err != nil {
		return fmt.Errorf("agent: simgpu: script: %w", err)
	}
	if st.ModTime().Equal(s.scriptMod) {
		return nil
	}
	f, err := os.Open(s.cfg.Script)
	if err != nil {
		return fmt.Errorf("agent: simgpu: script: %w", err)
	}
	defer f.Close()
	lines, err := ParseScript(f)
	if err != nil {
		return fmt.Errorf("%w (%s)", err, s.cfg.Script)
	}
	s.setScript(lines, st.ModTime())
	return nil
}

func (s *Sim) setScript(lines []ScriptLine, mod time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.scriptMod = lines, mod
	for k := range s.killed {
		if strings.HasPrefix(k, "script:") {
			delete(s.killed, k)
		}
	}
	present := map[string]bool{}
	for _, l := range lines {
		k := s.node.scriptKey(l)
		present[k] = true
		if _, ok := s.firstSeen[k]; !ok {
			// A line starts its process when the script was written with
			// it, not when this agent first read it: a restarted agent sees
			// the same process (same start time), not a new one.
			s.firstSeen[k] = mod
		}
	}
	for k := range s.firstSeen {
		if strings.HasPrefix(k, "script:") && !present[k] {
			delete(s.firstSeen, k) // a line removed and added again is a new process
		}
	}
}

// Signal is the detect.Signaller of a simulated node: SIGTERM and SIGKILL
// end the simulated process (the next sample no longer lists it). It never
// signals anything real: a PID it did not make is refused.
func (s *Sim) Signal(pid int, sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.byPID[pid]
	if !ok {
		return fmt.Errorf("agent: simgpu: pid %d is not a simulated process; not signalled", pid)
	}
	if sig == syscall.SIGTERM || sig == syscall.SIGKILL {
		s.killed[k] = true
		_ = os.RemoveAll(filepath.Join(s.tree.root(), fmt.Sprint(pid)))
		delete(s.tree.written, pid)
	}
	return nil
}
