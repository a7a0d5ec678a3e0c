package simgpu

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

func TestParseMIG(t *testing.T) {
	tests := []struct {
		in      string
		want    MIGLayout
		wantErr string
	}{
		{"3:7x1g.10gb", MIGLayout{3: {"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}}, ""},
		{"0:1g.10gb,1g.10gb,2g.20gb,3g.40gb", MIGLayout{0: {"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"}}, ""},
		{" 0: 3g.40gb, 4g.40gb ; 2:1g.10gb+me ;", MIGLayout{0: {"3g.40gb", "4g.40gb"}, 2: {"1g.10gb+me"}}, ""},
		{"", MIGLayout{}, ""},
		{"7x1g.10gb", nil, "want INDEX:PROFILES"},
		{"x:1g.10gb", nil, "want INDEX:PROFILES"},
		{"0:1g.10gb; 0:2g.20gb", nil, "GPU 0 listed twice"},
		{"0:8x1g.10gb", nil, "want a count of 1 to 7"},
		{"0:1g.10gb,7g.80gb", nil, "hold 8 slices, more than the GPU's 7"},
		{"0:1c.2g.20gb", nil, `"1c.2g.20gb" is not a MIG profile`},
		{"0:", nil, `"" is not a MIG profile`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMIG(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseMIG(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseMIG(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	if got := (MIGLayout{2: {"1g.10gb"}, 0: {"3g.40gb", "4g.40gb"}}).String(); got != "0:3g.40gb,4g.40gb; 2:1g.10gb" {
		t.Errorf("String = %q", got)
	}
}

// TestMIGNodeThroughTheRealPath: GPU 1 of a simulated node split 7 ×
// 1g.10gb, read through the real NVML backend, sampler and detector: the
// inventory lists the seven instances with stable UUIDs; ada's booking of
// instance 2 runs her process there, attributed to that instance alone;
// a script line on instance 4 is unbooked use of instance 4; a layout
// that does not fit its GPU is refused with the reason.
func TestMIGNodeThroughTheRealPath(t *testing.T) {
	dir := t.TempDir()
	now := t0
	layout, err := ParseMIG("1:7x1g.10gb")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "load")
	if err := os.WriteFile(script, []byte("1/4 mallory 80 2000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Node: "n1", GPUs: 2, Dir: filepath.Join(dir, "sim"), CachePath: filepath.Join(dir, "schedule.json"), Script: script,
		Host: mapUsers{"root": 0, "ada": 1001}, MIG: layout, Now: func() time.Time { return now }}
	sim, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := New(Config{Node: "n1", GPUs: 2, Dir: t.TempDir(), MIG: layout})
	if err != nil || again.MIGUUID(1, 2) != sim.MIGUUID(1, 2) || sim.MIGUUID(1, 2) == sim.MIGUUID(1, 3) {
		t.Errorf("instance UUIDs: %s then %s (err %v); want stable and distinct from %s", sim.MIGUUID(1, 2), again.MIGUUID(1, 2), err, sim.MIGUUID(1, 3))
	}
	booking := wire.Booking{ID: 6, User: "ada", GPUUUIDs: []string{sim.MIGUUID(1, 2)}, StartsAt: t0.Add(-time.Hour), EndsAt: t0.Add(time.Hour)}
	if err := cache.Write(cfg.CachePath, cache.File{Schedule: wire.Schedule{Bookings: []wire.Booking{booking}}}); err != nil {
		t.Fatal(err)
	}
	src, _, err := sim.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	devs, err := src.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := devs[1]; !g.MIG || g.MIGSlices != 7 || len(g.Instances) != 7 || g.Instances[2].UUID != sim.MIGUUID(1, 2) ||
		g.Instances[2].Profile != "1g.10gb" || g.Instances[2].Slices != 1 || g.Instances[2].MemTotalMiB != 10240 || g.Instances[2].GPUInstanceID != 3 {
		t.Fatalf("GPU 1 = %+v, want seven 1g.10gb instances", g)
	}
	if devs[0].MIG {
		t.Errorf("GPU 0 = %+v, want no MIG", devs[0])
	}
	res := procfs.New(sim.ProcRoot(), sim.Passwd(), sim.Group())
	smp := sampler.New(src, res, devs, nil)
	det := detect.New("n1", detect.DefaultPolicy(), sim, nil, res, nil)
	snap, err := smp.Sample(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	units := snap.Units()
	if len(units) != 8 {
		t.Fatalf("units = %d, want GPU 0 and GPU 1's seven instances", len(units))
	}
	for j, u := range units[1:] {
		var users []string
		for _, p := range u.Procs {
			users = append(users, p.User)
		}
		want := map[int][]string{2: {"ada"}, 4: {"mallory"}}[j]
		if u.Device.UUID != sim.MIGUUID(1, j) || !reflect.DeepEqual(users, want) || len(want) > 0 && u.MemUsedMiB == 0 {
			t.Errorf("instance %d = %s with %v (%d MiB used), want %v", j, u.Device.UUID, users, u.MemUsedMiB, want)
		}
	}
	ev := det.Observe(snap, []wire.Booking{booking})
	if len(ev.Violations) != 1 || ev.Violations[0].User != "mallory" || ev.Violations[0].GPUUUID != sim.MIGUUID(1, 4) {
		t.Errorf("violations = %+v, want mallory's use of instance 4", ev.Violations)
	}
	tab, err := lock.ReadMIGMinors(sim.MIGTableRoot())
	if err != nil || tab["gpu1/gi3/access"] != capMinor(1, 3, -1) || tab["gpu1/gi3/ci0/access"] != capMinor(1, 3, 0) {
		t.Errorf("capability table: gi3 %d, ci0 %d (err %v)", tab["gpu1/gi3/access"], tab["gpu1/gi3/ci0/access"], err)
	}
	small := cfg
	small.MemoryMiB, small.Dir = 46068, t.TempDir()
	if _, err := New(small); err == nil || !strings.Contains(err.Error(), "71680 MiB, more than the GPU's 46068") {
		t.Errorf("7 × 1g.10gb on a 46068 MiB GPU: %v, want it refused with the reason", err)
	}
	small.MIG, small.MemoryMiB = MIGLayout{2: {"1g.10gb"}}, 0
	if _, err := New(small); err == nil || !strings.Contains(err.Error(), "GPU 2 of a node of 2 GPUs") {
		t.Errorf("layout of GPU 2 on a 2-GPU node: %v, want it refused", err)
	}
}

// TestMIGCapFiles: as root, each instance gets its GPU and compute
// instance capability files, numbered as in the table, with a major no
// driver answers.
func TestMIGCapFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (mknod)")
	}
	sim, err := New(Config{Node: "n1", GPUs: 2, Dir: t.TempDir(), DevDir: t.TempDir(), MIG: MIGLayout{1: {"3g.40gb", "4g.40gb"}}})
	if err != nil || sim.DeviceFilesErr() != nil {
		t.Fatal(err, sim.DeviceFilesErr())
	}
	defer sim.Close()
	if len(sim.caps.files) != 4 || sim.CapsMajor() < 384 {
		t.Fatalf("cap files %v, major %d; want 4 with a dynamic major", sim.caps.files, sim.CapsMajor())
	}
	for _, c := range [][2]int{{1, -1}, {1, 0}, {2, -1}, {2, 0}} {
		var st unix.Stat_t
		f := sim.CapFile(1, c[0], c[1])
		if err := unix.Stat(f, &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR || int(unix.Major(st.Rdev)) != sim.CapsMajor() || int(unix.Minor(st.Rdev)) != capMinor(1, c[0], c[1]) {
			t.Errorf("%s: mode %o, %d:%d", f, st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev))
		}
	}
}
