package lock_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/models/wire"
)

// span is from, from+1, …, to-1.
func span(from, to int) []int {
	var out []int
	for m := from; m < to; m++ {
		out = append(out, m)
	}
	return out
}

func capTable(t *testing.T, gpus int) lock.CapTable {
	t.Helper()
	tab, err := lock.ParseMIGMinors(strings.NewReader(locktest.MIGMinors(gpus)))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestCapTable: the driver's table, as an 8-GPU node's driver writes it,
// gives each GPU its own 135 capability minors (15 GPU instances with 8
// compute instances each), and each instance its two.
func TestCapTable(t *testing.T) {
	tab := capTable(t, 8)
	if got, want := len(tab), 2+8*135; got != want {
		t.Fatalf("table has %d entries, want %d", got, want)
	}
	for _, tt := range []struct {
		gpu  int
		want []int
	}{{0, span(3, 138)}, {3, span(408, 543)}, {7, span(948, 1083)}, {8, nil}} {
		if got := tab.OfGPU(tt.gpu); !slices.Equal(got, tt.want) {
			t.Errorf("OfGPU(%d) = %d minors %v…, want %d from %v", tt.gpu, len(got), head(got), len(tt.want), head(tt.want))
		}
	}
	if got := tab.OfGPU(1); slices.Contains(got, 1) || slices.Contains(got, 2) {
		t.Errorf("OfGPU(1) has config or monitor: %v", head(got))
	}
	migs := lock.Resolve([]lock.MIGInstance{
		{UUID: "MIG-a", ParentMinor: 3, GPUInstance: 1, ComputeInstance: 0},
		{UUID: "MIG-b", ParentMinor: 3, GPUInstance: 2, ComputeInstance: 1},
		{UUID: "MIG-unknown", ParentMinor: 3, GPUInstance: -1, ComputeInstance: -1}, // NVML did not say
		{UUID: "MIG-off-table", ParentMinor: 12, GPUInstance: 1, ComputeInstance: 0},
	}, tab)
	for i, want := range [][]int{{417, 418}, {426, 428}, nil, nil} {
		if !slices.Equal(migs[i].CapMinors, want) {
			t.Errorf("%s: caps %v, want %v", migs[i].UUID, migs[i].CapMinors, want)
		}
	}
	gpus := []lock.GPU{{UUID: "GPU-2", Minor: 2, MIG: true}, {UUID: "GPU-3", Minor: 3, MIG: true}, {UUID: "GPU-5", Minor: 5}}
	if got, want := lock.NodeCaps(gpus, migs, tab), append(span(273, 408), span(408, 543)...); !slices.Equal(got, want) {
		t.Errorf("NodeCaps = %d minors, want %d (GPU 5 is not in MIG mode)", len(got), len(want))
	}
	// Without a table (driver without MIG) only the instances' own caps.
	extra := []lock.MIGInstance{{UUID: "MIG-x", ParentMinor: 3, CapMinors: []int{40, 41}}}
	if got := lock.NodeCaps(gpus, extra, nil); !slices.Equal(got, []int{40, 41}) {
		t.Errorf("NodeCaps without a table = %v, want [40 41]", got)
	}
}

func head(s []int) []int { return s[:min(len(s), 4)] }

func TestReadMIGMinors(t *testing.T) {
	root := t.TempDir()
	tab, err := lock.ReadMIGMinors(root)
	if err != nil || len(tab) != 0 {
		t.Errorf("no file: %v, %v; want an empty table and no error (driver without MIG)", tab, err)
	}
	dir := filepath.Join(root, "driver", "nvidia-caps")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mig-minors"), []byte(locktest.MIGMinors(2)), 0o444); err != nil {
		t.Fatal(err)
	}
	tab, err = lock.ReadMIGMinors(root)
	if err != nil || tab["gpu1/gi14/ci7/access"] != 272 || tab["monitor"] != 2 {
		t.Errorf("read: %d entries, gpu1/gi14/ci7 = %d, monitor = %d, %v", len(tab), tab["gpu1/gi14/ci7/access"], tab["monitor"], err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mig-minors"), []byte("gpu0/gi0/access x\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ReadMIGMinors(root); err == nil {
		t.Error("a bad minor read without error")
	}
}

// TestAllowForMIG: who may open which MIG capability files of GPUs 2 and 3
// (MIG mode; GPU 3 split into two instances) with the driver's table of an
// 8-GPU node; GPU 5, not in MIG mode, has none in the rules.
func TestAllowForMIG(t *testing.T) {
	tab := capTable(t, 8)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	gpus := []lock.GPU{{UUID: "GPU-2", Minor: 2, MIG: true}, {UUID: "GPU-3", Minor: 3, MIG: true}, {UUID: "GPU-5", Minor: 5}}
	migs := lock.Resolve([]lock.MIGInstance{
		{UUID: "MIG-a", ParentMinor: 3, GPUInstance: 1, ComputeInstance: 0},
		{UUID: "MIG-b", ParentMinor: 3, GPUInstance: 2, ComputeInstance: 0},
		{UUID: "MIG-lost", ParentMinor: 3, GPUInstance: -1, ComputeInstance: -1},
	}, tab)
	bk := func(user string, uuids ...string) wire.Booking {
		return wire.Booking{ID: 1, User: user, GPUUUIDs: uuids, StartsAt: t0, EndsAt: t0.Add(time.Hour)}
	}
	bookings := []wire.Booking{bk("alice", "GPU-3"), bk("bob", "MIG-a"), bk("carol", "GPU-2"), bk("dave", "MIG-lost"), bk("frank", "GPU-5")}
	nodeCaps := lock.NodeCaps(gpus, migs, tab)
	mj := lock.Majors{GPU: 195, Caps: 509}
	tests := []struct {
		user       string
		gpus, caps []int
		open, shut []int // capability minors the rules leave open / deny
	}{
		{"alice", []int{3}, span(408, 543), []int{417, 418, 426, 427, 453}, []int{273, 407}},
		{"bob", []int{3}, []int{417, 418}, []int{417, 418}, []int{408, 426, 427, 453, 273}},
		{"carol", []int{2}, span(273, 408), []int{273, 407}, []int{417, 418, 426, 427}},
		{"dave", []int{3}, nil, nil, []int{408, 417, 426, 542}},
		{"erin", nil, nil, nil, []int{273, 417, 418, 426, 542}},
		{"frank", []int{5}, nil, nil, []int{273, 417, 542}}, // no MIG on GPU 5: no capability files
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			a := lock.AllowFor(bookings, tt.user, t0, gpus, migs, tab)
			if !slices.Equal(a.GPUMinors, tt.gpus) || !slices.Equal(a.CapMinors, tt.caps) {
				t.Errorf("allow gpus %v caps %d from %v, want %v and %d from %v", a.GPUMinors, len(a.CapMinors), head(a.CapMinors), tt.gpus, len(tt.caps), head(tt.caps))
			}
			denied := map[int]bool{}
			for _, r := range lock.Rules(a, mj, nodeCaps)[1:] {
				if r.Major == 509 {
					denied[int(r.Minor)] = true
				}
			}
			if got, want := len(denied), len(nodeCaps)-len(tt.caps); got != want {
				t.Errorf("%d capability files denied, want %d", got, want)
			}
			for _, m := range tt.open {
				if denied[m] {
					t.Errorf("nvidia-cap%d denied", m)
				}
			}
			for _, m := range tt.shut {
				if !denied[m] {
					t.Errorf("nvidia-cap%d not denied", m)
				}
			}
			if denied[1] || denied[2] {
				t.Error("config or monitor capability denied; they are no instance's")
			}
		})
	}
}
