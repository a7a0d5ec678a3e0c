package lock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	devices "github.com/opencontainers/cgroups/devices/config"
	"golang.org/x/sys/unix"
)

// On cgroup2 the agent attaches a device program of its own (not runc's)
// so that it can count what it refuses: the program enforces the same
// rules (a default allow, then exact char major:minor denials) and, on a
// denial, adds one to a counter in a BPF array map beside it. The map has
// one entry (key 0) whose value is refusedSlots counters, so one lookup
// reads a cgroup's counts:
//
//	slot 0–253       GPU device file /dev/nvidiaN (195:N)
//	slot 256+N       a MIG capability file of the GPU with minor N
//	slot slotCapOther a capability file whose GPU the driver's table does not name
const (
	refusedMapName = "gpubook_refused" // at most 15 bytes: the kernel's object-name limit
	progName       = "gpubook_devices"
	refusedSlots   = 512
	slotCapBase    = 256
	slotCapOther   = refusedSlots - 1
	refusedValSize = refusedSlots * 8
)

// newRefusedMap makes a cgroup's counters.
func newRefusedMap() (*ebpf.Map, error) {
	memlockOnce.Do(func() { _ = rlimit.RemoveMemlock() }) // kernels before 5.11 charge maps to RLIMIT_MEMLOCK
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: refusedMapName, Type: ebpf.Array, KeySize: 4,
		ValueSize: refusedValSize, MaxEntries: 1})
	if err != nil {
		return nil, fmt.Errorf("lock: refusal counters: %w", err)
	}
	return m, nil
}

var memlockOnce sync.Once

// readRefused returns a map's counters, one per slot.
func readRefused(m *ebpf.Map) ([]uint64, error) {
	buf := make([]byte, refusedValSize)
	if err := m.Lookup(uint32(0), buf); err != nil {
		return nil, fmt.Errorf("lock: read refusal counters: %w", err)
	}
	out := make([]uint64, refusedSlots)
	for i := range out {
		out[i] = binary.NativeEndian.Uint64(buf[i*8:])
	}
	return out, nil
}

// deviceProgram compiles rules, in the shape Rules and openRules give
// (everything allowed, then exact char denials with rwm), into a cgroup
// device program. With counts it adds one to the slot that slot gives for
// each refused access; without, it only refuses. Any other shape is an
// error rather than a guess.
func deviceProgram(rules []*devices.Rule, slot func(major, minor int64) int, counts *ebpf.Map) (asm.Instructions, error) {
	if len(rules) == 0 || rules[0].Type != devices.WildcardDevice || !rules[0].Allow || rules[0].Major != devices.Wildcard ||
		rules[0].Minor != devices.Wildcard || !rwm(rules[0].Permissions) {
		return nil, errors.New("lock: device program: rules must start by allowing everything")
	}
	insns := asm.Instructions{
		// struct bpf_cgroup_dev_ctx { u32 access_type (type | access << 16); u32 major; u32 minor; }
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word),
		asm.And.Imm32(asm.R2, 0xFFFF),
		asm.LoadMem(asm.R4, asm.R1, 4, asm.Word),
		asm.LoadMem(asm.R5, asm.R1, 8, asm.Word),
		asm.JNE.Imm(asm.R2, int32(unix.BPF_DEVCG_DEV_CHAR), "allow"),
	}
	for i, r := range rules[1:] {
		if r.Allow || r.Type != devices.CharDevice || r.Major < 0 || r.Minor < 0 || r.Major > 1<<20 || r.Minor > 1<<20 || !rwm(r.Permissions) {
			return nil, fmt.Errorf("lock: device program: unsupported rule %s", r.CgroupString())
		}
		next := "allow"
		if i+2 < len(rules) {
			next = "rule-" + strconv.Itoa(i+1)
		}
		s := slotCapOther
		if slot != nil {
			s = slot(r.Major, r.Minor)
		}
		insns = append(insns,
			asm.JNE.Imm(asm.R4, int32(r.Major), next).WithSymbol("rule-"+strconv.Itoa(i)),
			asm.JNE.Imm(asm.R5, int32(r.Minor), next),
			asm.Mov.Imm(asm.R6, int32(s*8)), // the counter's byte offset in the value
			asm.Ja.Label("refuse"),
		)
	}
	insns = append(insns,
		asm.Mov.Imm32(asm.R0, 1).WithSymbol("allow"),
		asm.Return(),
	)
	if len(rules) == 1 {
		return insns, nil // nothing refused: the verifier rejects unreachable code
	}
	refuse := asm.Instructions{asm.Mov.Imm32(asm.R0, 0)}
	if counts != nil {
		refuse = asm.Instructions{
			asm.StoreImm(asm.R10, -4, 0, asm.Word), // key 0
			asm.LoadMapPtr(asm.R1, counts.FD()),
			asm.Mov.Reg(asm.R2, asm.R10),
			asm.Add.Imm(asm.R2, -4),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "deny"),
			asm.Add.Reg(asm.R0, asm.R6),
			asm.Mov.Imm(asm.R1, 1),
			asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
			asm.Mov.Imm32(asm.R0, 0).WithSymbol("deny"),
		}
	}
	refuse[0] = refuse[0].WithSymbol("refuse")
	return append(append(insns, refuse...), asm.Return()), nil
}

// rwm tells whether p is every access: read, write and mknod.
func rwm(p devices.Permissions) bool {
	s := string(p)
	return len(s) == 3 && strings.Contains(s, "r") && strings.Contains(s, "w") && strings.Contains(s, "m")
}

// attachDeviceProgram loads insns and makes it the only device program of
// the cgroup dir, as runc does: the new one is attached first (with
// BPF_F_ALLOW_MULTI, so both run meanwhile and the stricter answer wins),
// then every program that was there before (the agent's previous one, or
// the one runc's library attached for an older agent) is detached. There
// is never a moment without a program.
func attachDeviceProgram(dir string, insns asm.Instructions) error {
	memlockOnce.Do(func() { _ = rlimit.RemoveMemlock() })
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("lock: cgroup %s: %w", dir, err)
	}
	defer unix.Close(fd)
	old, err := link.QueryPrograms(link.QueryOptions{Target: fd, Attach: ebpf.AttachCGroupDevice})
	if err != nil {
		return fmt.Errorf("lock: cgroup %s: list device programs: %w", dir, err)
	}
	prog, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{Name: progName, Type: ebpf.CGroupDevice,
		Instructions: insns, License: "Apache-2.0"}, ebpf.ProgramOptions{})
	if err != nil {
		return fmt.Errorf("lock: cgroup %s: load device program: %w", dir, err)
	}
	defer prog.Close() // the attachment keeps it alive
	if err := link.RawAttachProgram(link.RawAttachProgramOptions{Target: fd, Program: prog,
		Attach: ebpf.AttachCGroupDevice, Flags: unix.BPF_F_ALLOW_MULTI}); err != nil {
		return fmt.Errorf("lock: cgroup %s: attach device program: %w", dir, err)
	}
	var errs []error
	for _, ap := range old.Programs {
		p, err := ebpf.NewProgramFromID(ap.ID)
		if errors.Is(err, os.ErrNotExist) {
			continue // gone meanwhile
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("lock: cgroup %s: old device program %d: %w", dir, ap.ID, err))
			continue
		}
		err = link.RawDetachProgram(link.RawDetachProgramOptions{Target: fd, Program: p, Attach: ebpf.AttachCGroupDevice})
		p.Close()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("lock: cgroup %s: detach old device program %d: %w", dir, ap.ID, err))
		}
	}
	return errors.Join(errs...)
}

// attachedRefusedMap finds the counters of the agent's program attached
// to dir (left by an agent that stopped), so that a restart goes on with
// the kernel's counts; nil when there is none.
func attachedRefusedMap(dir string) (*ebpf.Map, error) {
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("lock: cgroup %s: %w", dir, err)
	}
	defer unix.Close(fd)
	res, err := link.QueryPrograms(link.QueryOptions{Target: fd, Attach: ebpf.AttachCGroupDevice})
	if err != nil {
		return nil, fmt.Errorf("lock: cgroup %s: list device programs: %w", dir, err)
	}
	for _, ap := range res.Programs {
		if m := refusedMapOf(ap.ID); m != nil {
			return m, nil
		}
	}
	return nil, nil
}

func refusedMapOf(id ebpf.ProgramID) *ebpf.Map {
	p, err := ebpf.NewProgramFromID(id)
	if err != nil {
		return nil
	}
	defer p.Close()
	info, err := p.Info()
	if err != nil {
		return nil
	}
	ids, _ := info.MapIDs()
	for _, mid := range ids {
		m, err := ebpf.NewMapFromID(mid)
		if err != nil {
			continue
		}
		if mi, err := m.Info(); err == nil && mi.Name == refusedMapName && mi.Type == ebpf.Array &&
			mi.KeySize == 4 && mi.ValueSize == refusedValSize && mi.MaxEntries == 1 {
			return m
		}
		m.Close()
	}
	return nil
}
