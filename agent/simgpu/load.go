package simgpu

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// Proc is one simulated GPU process: who runs it, on which GPU, how hard.
type Proc struct {
	// Key names what the process stands for ("booking:ID:GPU" or
	// "script:GPU:USER"); it decides the PID, so the same process keeps
	// its PID from sample to sample and across agent restarts.
	Key    string
	GPU    int
	Inst   int // the MIG instance of GPU it runs on (its place in the layout); -1 on a GPU without MIG
	User   string
	Util   uint32
	MemMiB int64
	Since  time.Time
}

// Behaviour is how the holder of a booking uses it. It is chosen by the
// booking's ID, so a booking behaves the same on every run and every node.
type Behaviour int

// The behaviours: most bookers train on every booked GPU; some hold their
// GPUs and run nothing (an idle booking), some use only the first of
// several GPUs (the rest idle), some keep running after the end (overstay).
const (
	Train Behaviour = iota
	Idle
	Partial
	Overrun
)

// overrunFor is how long an Overrun booker's processes outlive the booking.
const overrunFor = 15 * time.Minute

// BehaviourOf returns the behaviour of booking id: ids ≡ 2 (mod 6) are
// idle, ≡ 4 partial, ≡ 5 overrun, the others train.
func BehaviourOf(id int64) Behaviour {
	switch id % 6 {
	case 2:
		return Idle
	case 4:
		return Partial
	case 5:
		return Overrun
	}
	return Train
}

// ScriptLine is one extra process from the load script: "GPU USER UTIL
// MEM_MIB", where GPU is an index or, for a MIG instance, "INDEX/N" (the
// GPU's Nth instance, from 0, as sim_mig lists them). It runs while the
// line is in the file.
type ScriptLine struct {
	GPU    int
	Inst   int // -1: no instance named (on a MIG GPU: its first)
	User   string
	Util   uint32
	MemMiB int64
}

// ParseScript reads a load script: one process per line, '#' comments.
func ParseScript(r io.Reader) ([]ScriptLine, error) {
	var out []ScriptLine
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("agent: simgpu: script line %d: want GPU USER UTIL MEM_MIB", n)
		}
		g, in, isInst := strings.Cut(f[0], "/")
		gpu, err1 := strconv.Atoi(g)
		inst := -1
		if isInst {
			inst, err1 = strconv.Atoi(in)
		}
		util, err2 := strconv.ParseUint(f[2], 10, 32)
		mem, err3 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || gpu < 0 || isInst && inst < 0 || util > 100 || mem < 0 {
			return nil, fmt.Errorf("agent: simgpu: script line %d: bad number", n)
		}
		out = append(out, ScriptLine{GPU: gpu, Inst: inst, User: f[1], Util: uint32(util), MemMiB: mem})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("agent: simgpu: script: %w", err)
	}
	return out, nil
}

// scriptKey names a script line's process: "script:GPU:USER", or
// "script:GPU/N:USER" on MIG instance N.
func (n Node) scriptKey(l ScriptLine) string {
	if at := n.place(l.GPU, l.Inst); at.inst >= 0 {
		return fmt.Sprintf("script:%d/%d:%s", l.GPU, at.inst, l.User)
	}
	return fmt.Sprintf("script:%d:%s", l.GPU, l.User)
}

// Node is what the plan needs to know about the simulated node.
type Node struct {
	UUIDs     []string // index → UUID
	MemoryMiB int64
	// MIG is, per GPU index, its MIG instances (none: MIG off).
	MIG [][]Slot
}

// Slot is one MIG instance as the plan sees it.
type Slot struct {
	UUID      string
	MemoryMiB int64
}

// unit is where a booked UUID runs: a GPU, or one of its MIG instances.
type unit struct{ gpu, inst int }

// units maps the node's GPU and instance UUIDs to their units; a MIG
// GPU's own UUID stands for its first instance (nothing runs on a GPU in
// MIG mode outside an instance).
func (n Node) units() map[string]unit {
	out := make(map[string]unit, len(n.UUIDs))
	for i, u := range n.UUIDs {
		out[u] = n.place(i, -1)
		if i < len(n.MIG) {
			for j, in := range n.MIG[i] {
				out[in.UUID] = unit{i, j}
			}
		}
	}
	return out
}

// place is the unit a process named by GPU i and instance j runs on.
func (n Node) place(i, j int) unit {
	if i >= len(n.MIG) || len(n.MIG[i]) == 0 {
		return unit{i, -1}
	}
	if j < 0 || j >= len(n.MIG[i]) {
		j = 0
	}
	return unit{i, j}
}

// memory is a unit's memory in MiB.
func (n Node) memory(u unit) int64 {
	if u.inst >= 0 {
		return n.MIG[u.gpu][u.inst].MemoryMiB
	}
	return n.MemoryMiB
}

// Plan is the whole simulated load at now: the bookers' processes (by
// their bookings' behaviour) and the script's processes. firstSeen gives
// each script line's start; it is pure so tests can table it.
func Plan(n Node, bookings []wire.Booking, script []ScriptLine, firstSeen func(key string) time.Time, now time.Time) []Proc {
	index := n.units()
	var out []Proc
	for _, b := range bookings {
		beh := BehaviourOf(b.ID)
		running := b.ActiveAt(now) || beh == Overrun && !now.Before(b.StartsAt) && now.Before(b.EndsAt.Add(overrunFor))
		if !running || beh == Idle {
			continue
		}
		first := true
		for _, u := range b.GPUUUIDs {
			at, ok := index[u]
			if !ok {
				continue
			}
			if beh == Partial && !first {
				continue
			}
			first = false
			key := fmt.Sprintf("booking:%d:%d", b.ID, at.gpu)
			if at.inst >= 0 {
				key += fmt.Sprintf("/%d", at.inst)
			}
			out = append(out, Proc{Key: key, GPU: at.gpu, Inst: at.inst, User: b.User,
				Util: 55 + hash(fmt.Sprint(b.ID, at.gpu, now.Unix()/60))%40, MemMiB: n.memory(at) * int64(60+b.ID%25) / 100, Since: b.StartsAt})
		}
	}
	for _, l := range script {
		if l.GPU >= len(n.UUIDs) {
			continue
		}
		k := n.scriptKey(l)
		at := n.place(l.GPU, l.Inst)
		out = append(out, Proc{Key: k, GPU: at.gpu, Inst: at.inst, User: l.User, Util: l.Util, MemMiB: min(l.MemMiB, n.memory(at)), Since: firstSeen(k)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// pidBase puts simulated PIDs high in Linux's range (below PID_MAX_LIMIT,
// 2^22, the most the wire protocol accepts). They may equal a real
// process's PID, which is harmless: the agent reads them from the
// simulated /proc tree, and the simulation's signaller only ends its own
// processes, never calling kill(2).
const pidBase = 3_000_000

// PIDs gives each process a PID from its key: stable across samples and
// restarts, collisions resolved in key order. procs must be sorted by Key.
func PIDs(procs []Proc) map[string]int {
	out := make(map[string]int, len(procs))
	used := map[int]bool{}
	for _, p := range procs {
		pid := pidBase + 1000 + int(hash(p.Key)%1_000_000)
		for used[pid] {
			pid++
		}
		used[pid], out[p.Key] = true, pid
	}
	return out
}

func hash(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}
