package lock

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
)

// Refusal is what the kernel refused one confined user on one GPU between
// two reads: a user who ignores CUDA_VISIBLE_DEVICES, or names a GPU they
// do not hold, gets EPERM, and this is how the portal learns of it. Only
// cgroup2 can count (the agent's device program does); v1's devices
// controller refuses without a trace, so a v1 node reports none.
type Refusal struct {
	User string
	UID  int
	// GPUMinor is the GPU's device minor (/dev/nvidiaN); -1 for a MIG
	// capability file whose GPU the driver's table does not name.
	GPUMinor int
	// MIG: the refused file was a MIG capability file of that GPU (an
	// instance the user holds no booking of), not the GPU's device file.
	MIG   bool
	Count uint64
	// Since and At bound when: after the previous read (or since the
	// counters were set up) and at the latest by this one.
	Since, At time.Time
}

// counter is one cgroup's refusal counts, as last read.
type counter struct {
	m    *ebpf.Map
	uid  int
	user string
	last []uint64
	read time.Time
}

// counterFor returns dir's counters: those already in use, those of the
// agent's program still attached there (a restart goes on from the kernel's
// counts, reporting only what comes after), or new ones.
func (l *Locker) counterFor(dir string, uid int, user string, now time.Time) (*counter, error) {
	c := l.counts[dir]
	if c == nil {
		m, err := attachedRefusedMap(dir)
		if err != nil {
			return nil, err
		}
		last := make([]uint64, refusedSlots)
		if m != nil {
			if last, err = readRefused(m); err != nil {
				m.Close()
				return nil, err
			}
		} else if m, err = newRefusedMap(); err != nil {
			return nil, err
		}
		c = &counter{m: m, last: last, read: now}
		l.counts[dir] = c
	}
	c.uid, c.user = uid, user
	return c, nil
}

// slot is where the device program counts a refusal of major:minor
// (devprog.go's table): a GPU's minor, or its MIG capability files' slot.
func (l *Locker) slot(major, minor int64) int {
	switch {
	case major == int64(l.majors.GPU) && minor >= 0 && minor <= maxGPUMinor:
		return int(minor)
	case l.majors.Caps > 0 && major == int64(l.majors.Caps):
		if g, ok := l.capGPU[int(minor)]; ok {
			return slotCapBase + g
		}
	}
	return slotCapOther
}

// capGPUs maps each capability minor of the driver's table to its GPU's
// minor ("gpu3/gi1/access" → 3).
func capGPUs(t CapTable) map[int]int {
	out := map[int]int{}
	for path, m := range t {
		g, _, ok := strings.Cut(strings.TrimPrefix(path, "gpu"), "/")
		if n, err := strconv.Atoi(g); ok && strings.HasPrefix(path, "gpu") && err == nil && n >= 0 && n <= maxGPUMinor {
			out[m] = n
		}
	}
	return out
}

// Refusals returns what the kernel refused each confined user since the
// previous call (nothing on v1, which cannot count), sorted by UID and
// GPU. A cgroup whose counters cannot be read is skipped and named in the
// error; its counts are reported by a later call.
func (l *Locker) Refusals(now time.Time) ([]Refusal, error) {
	var out []Refusal
	var errs []error
	for _, c := range l.counts {
		vals, err := readRefused(c.m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for s, v := range vals {
			n := v - c.last[s]
			if v < c.last[s] { // counters made anew: all of it is new
				n = v
			}
			if n == 0 {
				continue
			}
			r := Refusal{User: c.user, UID: c.uid, GPUMinor: s, Count: n, Since: c.read, At: now}
			switch {
			case s == slotCapOther:
				r.GPUMinor, r.MIG = -1, true
			case s >= slotCapBase:
				r.GPUMinor, r.MIG = s-slotCapBase, true
			}
			out = append(out, r)
		}
		c.last, c.read = vals, now
	}
	slices.SortFunc(out, func(a, b Refusal) int {
		if a.UID != b.UID {
			return a.UID - b.UID
		}
		if a.GPUMinor != b.GPUMinor {
			return a.GPUMinor - b.GPUMinor
		}
		if a.MIG == b.MIG {
			return 0
		}
		if a.MIG {
			return 1
		}
		return -1
	})
	return out, errors.Join(errs...)
}

// Counting tells whether refused opens are counted on this node (cgroup2).
func (l *Locker) Counting() bool { return l.cg.Version == 2 }
