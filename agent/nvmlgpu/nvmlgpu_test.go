package nvmlgpu

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/gpu"
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
// sampled with its instance ids and memory; an empty slot is skipped.
func TestSampleMIGInstances(t *testing.T) {
	node := agenttest.NewNode(t)
	node.Set(2, agenttest.GPUState{MIG: true})
	d := node.Server.Devices[2].(*dgxa100.Device)
	mig := func(uuid string, gi, ci int, used, total uint64) *mock.Device {
		return &mock.Device{
			GetUUIDFunc:              func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
			GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return gi, nvml.SUCCESS },
			GetComputeInstanceIdFunc: func() (int, nvml.Return) { return ci, nvml.SUCCESS },
			GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
				return nvml.Memory{Used: used << 20, Total: total << 20}, nvml.SUCCESS
			},
		}
	}
	slots := []*mock.Device{mig("MIG-aaa", 1, 0, 512, 9728), nil, mig("MIG-bbb", 2, 0, 0, 9728)}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return len(slots), nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if slots[i] == nil {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return slots[i], nvml.SUCCESS
	}
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
			if len(s.Instances) != 0 {
				t.Errorf("GPU %d without MIG has instances %+v", i, s.Instances)
			}
			continue
		}
		want := []gpu.MIGInstance{{UUID: "MIG-aaa", GPUInstanceID: 1, MemUsedMiB: 512, MemTotalMiB: 9728},
			{UUID: "MIG-bbb", GPUInstanceID: 2, MemTotalMiB: 9728}}
		if !reflect.DeepEqual(s.Instances, want) || s.UtilValid {
			t.Errorf("MIG GPU: instances %+v (util valid %v), want %+v", s.Instances, s.UtilValid, want)
		}
	}
}
