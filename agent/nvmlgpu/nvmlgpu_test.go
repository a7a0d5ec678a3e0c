package nvmlgpu

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/nvmlgpu/migmock"
)

func TestOpenRefusesAfterFailedInit(t *testing.T) {
	// Only Init is set: any further call on this mock panics, which is the
	// test's stand-in for the real library killing the process.
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	b, err := Open(lib)
	if b != nil || !errors.Is(err, nvml.ERROR_LIBRARY_NOT_FOUND) {
		t.Fatalf("Open = %v, %v; want nil, ERROR_LIBRARY_NOT_FOUND", b, err)
	}
	if got, want := len(lib.InitCalls()), 1; got != want {
		t.Errorf("Init calls = %d, want %d", got, want)
	}
}

func TestDevices(t *testing.T) {
	node := agenttest.NewNode(t)
	node.Set(3, agenttest.GPUState{MIG: true})
	b, err := Open(node.Server)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	devs, err := b.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(devs), 8; got != want {
		t.Fatalf("devices = %d, want %d", got, want)
	}
	for i, d := range devs {
		t.Run(d.UUID, func(t *testing.T) {
			if d.UUID != node.UUID(i) || d.Index != i || d.Minor != i || d.Model != "Mock NVIDIA A100-SXM4-40GB" || d.MemoryMiB != 40960 || d.MIG != (i == 3) {
				t.Errorf("device %d = %+v", i, d)
			}
		})
	}
	if got, want := b.DriverVersion(), "550.54.15"; got != want {
		t.Errorf("driver = %q, want %q", got, want)
	}
}

func TestSample(t *testing.T) {
	node := agenttest.NewNode(t)
	node.Set(0, agenttest.GPUState{Util: 87, UsedMiB: 12000, Procs: []agenttest.Proc{{PID: 100, MemMiB: 8000}, {PID: 101, MemMiB: 4000}}})
	node.Set(1, agenttest.GPUState{Util: 50, UsedMiB: 3000, MIG: true, Procs: []agenttest.Proc{{PID: 200, MemMiB: 3000}}})
	b, err := Open(node.Server)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 {
		t.Fatalf("samples = %d, want 8", len(got))
	}
	tests := []struct {
		name                 string
		i                    int
		utilValid, mig       bool
		util                 float64
		used, procs, memProc int64
	}{
		{"busy GPU", 0, true, false, 87, 12000, 2, 8000},
		{"MIG GPU has no utilisation", 1, false, true, 0, 3000, 1, 3000},
		{"idle GPU", 2, true, false, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := got[tt.i]
			if s.UUID != node.UUID(tt.i) || s.UtilValid != tt.utilValid || s.MIG != tt.mig || s.UtilPct != tt.util ||
				s.MemUsedMiB != tt.used || s.MemTotalMiB != 40960 || int64(len(s.Processes)) != tt.procs {
				t.Errorf("sample = %+v", s)
			}
			if tt.procs > 0 && s.Processes[0].MemMiB != tt.memProc {
				t.Errorf("first process memory = %d, want %d", s.Processes[0].MemMiB, tt.memProc)
			}
		})
	}
}

func TestClosedBackendMakesNoCalls(t *testing.T) {
	node := agenttest.NewNode(t)
	b, err := Open(node.Server)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close = %v, want nil", err)
	}
	if _, err := b.Sample(context.Background()); err == nil {
		t.Error("Sample after Close succeeded, want error")
	}
}

// TestSampleMIGInstances: on a MIG GPU each MIG device NVML lists is
// sampled with its ids, profile, slices, memory and the processes listed
// on its own handle; an empty slot is skipped, and so is a compute
// instance smaller than its GPU instance (not a unit of its own).
func TestSampleMIGInstances(t *testing.T) {
	node := agenttest.NewNode(t)
	a := agenttest.MIG{Instance: migmock.Instance{UUID: "MIG-aaa", GI: 7, CI: 0, Profile: "1g.5gb", Slices: 1, MemoryMiB: 4864},
		UsedMiB: 512, Procs: []agenttest.Proc{{PID: 300, MemMiB: 500}}}
	c := agenttest.MIG{Instance: migmock.Instance{UUID: "MIG-bbb", GI: 1, CI: 0, Profile: "3g.20gb", Slices: 3, MemoryMiB: 19968}}
	node.Set(2, agenttest.GPUState{MIG: true, UsedMiB: 512, Procs: a.Procs, Instances: []agenttest.MIG{a, c}})
	b, err := Open(node.Server)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	samples, err := b.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if i != 2 {
			if len(s.Instances) != 0 || s.MIGSlices != 0 {
				t.Errorf("GPU %d without MIG has instances %+v, %d slices", i, s.Instances, s.MIGSlices)
			}
			continue
		}
		want := []gpu.MIGInstance{
			{UUID: "MIG-aaa", GPUInstanceID: 7, Profile: "1g.5gb", Slices: 1, MemUsedMiB: 512, MemTotalMiB: 4864, Processes: []gpu.Process{{PID: 300, MemMiB: 500}}},
			{UUID: "MIG-bbb", GPUInstanceID: 1, Profile: "3g.20gb", Slices: 3, MemTotalMiB: 19968}}
		if !reflect.DeepEqual(s.Instances, want) || s.UtilValid || s.MIGSlices != 7 {
			t.Errorf("MIG GPU: instances %+v (util valid %v, %d slices), want %+v and 7 slices", s.Instances, s.UtilValid, s.MIGSlices, want)
		}
	}
}

// TestDevicesMIGLayout: Devices reports a MIG GPU's slices and instances
// (no processes) and follows a reconfiguration; a slot that does not
// answer, a nameless instance (profile from its attributes) and a compute
// instance that shares its GPU instance are handled as NVML's tools do.
func TestDevicesMIGLayout(t *testing.T) {
	node := agenttest.NewNode(t)
	seven := make([]agenttest.MIG, 7)
	for i := range seven {
		seven[i] = agenttest.MIG{Instance: migmock.Instance{UUID: fmt.Sprintf("MIG-%d", i), GI: 7 + i, Profile: "1g.5gb", Slices: 1, MemoryMiB: 4864},
			Procs: []agenttest.Proc{{PID: 10 + i}}}
	}
	node.Set(1, agenttest.GPUState{MIG: true, Instances: seven})
	b, err := Open(node.Server)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	devs, err := b.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := devs[1]; !g.MIG || g.MIGSlices != 7 || len(g.Instances) != 7 || !reflect.DeepEqual(g.Instances[6], gpu.MIGInstance{UUID: "MIG-6", GPUInstanceID: 13,
		Profile: "1g.5gb", Slices: 1, MemTotalMiB: 4864}) {
		t.Errorf("GPU 1 = %+v, want MIG with seven 1g.5gb instances", g)
	}
	// Reconfigured: one 3g.20gb and one compute instance sharing a 4g GPU instance.
	node.Set(1, agenttest.GPUState{MIG: true, Instances: []agenttest.MIG{
		{Instance: migmock.Instance{UUID: "MIG-3g", GI: 2, Profile: "3g.20gb", Slices: 3, MemoryMiB: 19968}}}})
	dev := node.Server.Devices[1].(*dgxa100.Device)
	attach := dev.GetMigDeviceHandleByIndexFunc
	dev.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 1 { // a compute instance of 2 of its GPU instance's 4 slices
			m := migmock.Device("x", migmock.Instance{UUID: "MIG-shared", GI: 1, Profile: "2c.4g.20gb", Slices: 4, MemoryMiB: 19968},
				func() migmock.State { return migmock.State{} })
			m.GetAttributesFunc = func() (nvml.DeviceAttributes, nvml.Return) {
				return nvml.DeviceAttributes{GpuInstanceSliceCount: 4, ComputeInstanceSliceCount: 2, MemorySizeMB: 19968}, nvml.SUCCESS
			}
			return m, nvml.SUCCESS
		}
		m, ret := attach(i)
		if i == 0 { // a name without the profile: it comes from the attributes
			m.(*mock.Device).GetNameFunc = func() (string, nvml.Return) { return "NVIDIA A100-SXM4-40GB", nvml.SUCCESS }
		}
		return m, ret
	}
	if devs, _ = b.Devices(context.Background()); len(devs[1].Instances) != 1 || devs[1].Instances[0].UUID != "MIG-3g" ||
		devs[1].Instances[0].Profile != "3g.20gb" {
		t.Errorf("after reconfiguration: %+v, want MIG-3g alone", devs[1].Instances)
	}
	node.Set(1, agenttest.GPUState{})
	if devs, _ = b.Devices(context.Background()); devs[1].MIG || devs[1].MIGSlices != 0 || devs[1].Instances != nil {
		t.Errorf("MIG off: %+v, want no MIG layout", devs[1])
	}
}

func TestProfileName(t *testing.T) {
	tests := []struct {
		name      string
		slices    int
		memMB     uint64
		gpuMemMiB int64
		want      string
	}{
		{"A100 40GB 1g", 1, 4864, 40960, "1g.5gb"},
		{"A100 80GB 1g", 1, 9856, 81920, "1g.10gb"},
		{"A100 80GB 3g", 3, 40192, 81920, "3g.40gb"},
		{"H100 80GB 1g", 1, 9984, 81559, "1g.10gb"},
		{"H100 80GB 7g", 7, 80384, 81559, "7g.80gb"},
		{"no slices", 0, 9856, 81920, ""},
		{"no memory", 1, 0, 81920, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := profileName(tt.slices, tt.memMB, tt.gpuMemMiB); got != tt.want {
				t.Errorf("profileName(%d, %d, %d) = %q, want %q", tt.slices, tt.memMB, tt.gpuMemMiB, got, tt.want)
			}
		})
	}
}
