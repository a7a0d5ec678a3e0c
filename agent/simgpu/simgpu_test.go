package simgpu

import (
	"context"
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/sampler"
	"github.com/gpubook/gpubook/models/wire"
)

// TestSimulatedNodeThroughTheRealPath runs the simulated node through the
// production NVML backend, procfs resolver, sampler and detector: the
// booker's processes are attributed to the booker, the script's process
// to its user and reported as unbooked use, and a signal ends it.
func TestSimulatedNodeThroughTheRealPath(t *testing.T) {
	dir := t.TempDir()
	now := t0
	host := mapUsers{"root": 0, "ada": 1001}
	script := filepath.Join(dir, "load")
	if err := os.WriteFile(script, []byte("3 mallory 80 20000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sim, err := New(Config{Node: "n1", GPUs: 4, Model: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Dir: filepath.Join(dir, "sim"),
		CachePath: filepath.Join(dir, "schedule.json"), Script: script, Host: host, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if other, _ := New(Config{Node: "n1", Dir: t.TempDir()}); other.UUID(2) != sim.UUID(2) {
		t.Errorf("UUIDs differ between runs: %s, %s", other.UUID(2), sim.UUID(2))
	}
	booking := wire.Booking{ID: 6, User: "ada", GPUUUIDs: []string{sim.UUID(0)}, StartsAt: t0.Add(-time.Hour), EndsAt: t0.Add(time.Hour)}
	if err := cache.Write(filepath.Join(dir, "schedule.json"), cache.File{Schedule: wire.Schedule{Bookings: []wire.Booking{booking}}}); err != nil {
		t.Fatal(err)
	}
	src, driver, err := sim.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if driver != "550.54.15 (simulated)" {
		t.Errorf("driver = %q", driver)
	}
	devs, err := src.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 4 || devs[1].Model != "NVIDIA H100 80GB HBM3" || devs[1].MemoryMiB != 81559 || devs[1].UUID != sim.UUID(1) {
		t.Fatalf("devices = %+v", devs)
	}
	res := procfs.New(sim.ProcRoot(), sim.Passwd(), sim.Group())
	smp := sampler.New(src, res, devs, nil)
	pol := detect.DefaultPolicy()
	pol.Enforce, pol.Grace = true, time.Minute
	det := detect.New("n1", pol, sim, nil, res, nil)

	snap, err := smp.Sample(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	g0, g3 := snap.GPUs[0], snap.GPUs[3]
	if len(g0.Procs) != 1 || g0.Procs[0].User != "ada" || g0.Procs[0].UID != 1001 || !g0.UtilValid || g0.UtilPct < 55 {
		t.Errorf("GPU 0 = %+v, want ada (host UID 1001) training", g0)
	}
	if len(g3.Procs) != 1 || g3.Procs[0].User != "mallory" || g3.Procs[0].UID < uidBase || g3.UtilPct != 80 || g3.MemUsedMiB != 20000 {
		t.Errorf("GPU 3 = %+v, want mallory at 80 %% and 20000 MiB", g3)
	}
	if p := snap.GPUs[1]; len(p.Procs) != 0 || p.UtilPct != 0 || p.MemUsedMiB != 0 {
		t.Errorf("GPU 1 = %+v, want idle", p)
	}
	ev := det.Observe(snap, []wire.Booking{booking})
	if len(ev.Violations) != 1 || ev.Violations[0].User != "mallory" || ev.Violations[0].Kind != wire.ViolationUnbooked || ev.Violations[0].GPUUUID != sim.UUID(3) {
		t.Fatalf("violations = %+v, want mallory's unbooked use of GPU 3", ev.Violations)
	}
	now = now.Add(2 * time.Minute) // past the grace: the detector sends SIGTERM to the simulated process
	snap, _ = smp.Sample(context.Background(), now)
	ev = det.Observe(snap, []wire.Booking{booking})
	if len(ev.Violations) != 1 || ev.Violations[0].Action != wire.ActionSIGTERM {
		t.Fatalf("violations = %+v, want SIGTERM", ev.Violations)
	}
	now = now.Add(10 * time.Second)
	if snap, _ = smp.Sample(context.Background(), now); len(snap.GPUs[3].Procs) != 0 {
		t.Errorf("GPU 3 after SIGTERM = %+v, want no process", snap.GPUs[3])
	}
	if err := sim.Signal(os.Getpid(), syscall.SIGTERM); err == nil {
		t.Error("Signal of a real PID succeeded, want it refused")
	}
}

// TestRestartKeepsScriptProcesses: a script process seen by an agent that
// then restarts is the same process to the next one (same PID, same start
// time), so detection does not report it as a new violation; the device
// files of a run are replaced by the next and removed by Close.
func TestRestartKeepsScriptProcesses(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "load")
	if err := os.WriteFile(script, []byte("3 mallory 80 20000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := t0.Add(-30 * time.Minute)
	if err := os.Chtimes(script, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	start := func(now time.Time) (pid int, ticks uint64) {
		t.Helper()
		sim, err := New(Config{Node: "n1", GPUs: 4, Dir: filepath.Join(dir, "sim"), CachePath: filepath.Join(dir, "none.json"),
			Script: script, Host: mapUsers{"root": 0}, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := procfs.New(sim.ProcRoot(), sim.Passwd(), sim.Group())
		for k, p := range sim.pids {
			if strings.HasPrefix(k, "script:3:mallory") {
				st, err := res.StartTime(p)
				if err != nil {
					t.Fatal(err)
				}
				return p, st
			}
		}
		t.Fatal("no script process")
		return 0, 0
	}
	pid1, ticks1 := start(t0)
	pid2, ticks2 := start(t0.Add(10 * time.Minute)) // the agent restarted ten minutes later
	if pid1 != pid2 || ticks1 != ticks2 {
		t.Errorf("after a restart: pid %d→%d, start %d→%d; want the same process", pid1, pid2, ticks1, ticks2)
	}
	if want := uint64(mtime.Unix()) * 100; ticks1 != want {
		t.Errorf("start ticks %d, want the script's mtime (%d)", ticks1, want)
	}
}

// TestDeviceFiles: as root, each simulated GPU gets a 195:N character file
// in DevDir; without root the simulation runs and says why it has none.
func TestDeviceFiles(t *testing.T) {
	devDir := t.TempDir()
	sim, err := New(Config{Node: "n1", GPUs: 3, Dir: t.TempDir(), DevDir: devDir})
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if sim.DeviceFiles() != nil || sim.DeviceFilesErr() == nil {
			t.Errorf("not root: files %v, err %v; want none and the reason", sim.DeviceFiles(), sim.DeviceFilesErr())
		}
		return
	}
	files := sim.DeviceFiles()
	if len(files) != 3 || sim.DeviceFilesErr() != nil {
		t.Fatalf("files %v, err %v; want 3", files, sim.DeviceFilesErr())
	}
	for i, f := range files {
		var st unix.Stat_t
		if err := unix.Stat(f, &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR || unix.Major(st.Rdev) != 195 || unix.Minor(st.Rdev) != uint32(i) || st.Mode&0o777 != 0o666 {
			t.Errorf("%s: mode %o, %d:%d; want a 0666 character file 195:%d", f, st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev), i)
		}
	}
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(files[0])); !os.IsNotExist(err) {
		t.Errorf("device folder left after Close: %v", err)
	}
	bad, err := New(Config{Node: "../x", GPUs: 1, Dir: t.TempDir(), DevDir: devDir})
	if err != nil || bad.DeviceFiles() != nil || bad.DeviceFilesErr() == nil {
		t.Errorf("node ../x: %v, files %v, err %v; want the simulation without files and the reason", err, bad.DeviceFiles(), bad.DeviceFilesErr())
	}
}
