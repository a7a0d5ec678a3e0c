package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/gpu"
	"github.com/gpubook/gpubook/agent/metrics"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/simgpu"
	"github.com/gpubook/gpubook/agent/spool"
)

// cmdRun is the daemon. It keeps going without NVML (the schedule cache and
// logins still work) and without the portal (everything is spooled).
func cmdRun(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("run", "Run the agent daemon (as root, normally under systemd).", stderr, getenv)
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	cfg, err := loadConfig(*cfgPath, getenv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	cred, err := readCredential(cfg.CredentialFile)
	if err != nil {
		return err
	}
	if cfg.PortalURL == "" {
		cfg.PortalURL = cred.PortalURL
	}
	if cfg.Node == "" {
		cfg.Node = cred.Node
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return fmt.Errorf("agent: state dir: %w", err)
	}
	if cfg.GPU == "simulated" {
		// The host's processes and name service: the device lock confines
		// real logins on simulated GPUs too.
		return serveSimulated(ctx, cfg, cred, procfs.New(cfg.ProcRoot, cfg.PasswdFile, cfg.GroupFile), log)
	}
	var backend *nvmlgpu.Backend
	open := func(context.Context) (gpu.Source, string, error) {
		b, err := nvmlgpu.Open(nvml.New())
		if err != nil {
			return nil, "", err
		}
		backend = b
		return b, b.DriverVersion(), nil
	}
	defer func() {
		if backend != nil {
			_ = backend.Close()
		}
	}()
	return serve(ctx, cfg, cred, open, log)
}

// serve wires the daemon around open (real GPUs: the guarded kill(2), the
// host's clock, the lock on the host's processes) and runs it.
func serve(ctx context.Context, cfg config, cred credential, open daemon.OpenSource, log *slog.Logger) error {
	host := procfs.New(cfg.ProcRoot, cfg.PasswdFile, cfg.GroupFile)
	locker, lockMode := setupLock(cfg, host, readMajors(cfg, log), "", host.Root, log)
	return serveWith(ctx, cfg, cred, open, daemon.NewSignalGuard(cfg.ProcRoot, os.Getpid()), time.Now, locker, lockMode, log)
}

// serveSimulated runs the daemon on simulated GPUs (agent/simgpu). The
// resolver reads the simulation's process tree and passwd instead of the
// host's, and signals go to the simulation: nothing real is measured or
// signalled. The GPUs get real device files (195:N under dev_dir), so
// that `enforce = lock` confines the host's real logins to them.
func serveSimulated(ctx context.Context, cfg config, cred credential, host *procfs.Resolver, log *slog.Logger) error {
	sim, err := simgpu.New(simgpu.Config{Node: cfg.Node, GPUs: cfg.Sim.GPUs, Model: cfg.Sim.Model, MemoryMiB: cfg.Sim.MemoryMiB,
		Dir: filepath.Join(cfg.StateDir, "sim"), CachePath: cfg.CacheFile, Script: cfg.Sim.Script, MIG: cfg.Sim.MIG, Host: host, DevDir: cfg.DevDir})
	if err != nil {
		return err
	}
	defer sim.Close()
	noDevices := ""
	if err := sim.DeviceFilesErr(); err != nil {
		noDevices = "simulated GPUs have no device files: " + err.Error()
	}
	majors, migRoot := readMajors(cfg, log), host.Root
	if sim.MIGTableRoot() != "" {
		// Simulated MIG instances: their capability files and table are
		// the simulation's (a major no driver answers, like its GPUs').
		majors.Caps, migRoot = sim.CapsMajor(), sim.MIGTableRoot()
	}
	locker, lockMode := setupLock(cfg, host, majors, noDevices, migRoot, log)
	cfg.ProcRoot, cfg.PasswdFile, cfg.GroupFile = sim.ProcRoot(), sim.Passwd(), sim.Group()
	log.Warn("agent: SIMULATED GPUs (gpu = simulated): load follows the bookings and the load script; nothing real is measured or signalled",
		"gpus", cfg.Sim.GPUs, "mig", cfg.Sim.MIG.String(), "script", cfg.Sim.Script, "proc_root", cfg.ProcRoot, "clock_ahead", cfg.Sim.ClockAhead,
		"device_files", strings.Join(sim.DeviceFiles(), " "))
	ahead := cfg.Sim.ClockAhead
	now := func() time.Time { return time.Now().Add(ahead) }
	return serveWith(ctx, cfg, cred, sim.Open, sim, now, locker, lockMode, log)
}

// serveWith wires the daemon around open (tried now and, while it fails,
// again with backoff by the daemon) and runs it, with the detector's
// signaller, the clock and the device lock given: the guarded kill(2) and
// the host's clock for real GPUs, the simulation's signals and clock for
// simulated ones.
func serveWith(ctx context.Context, cfg config, cred credential, open daemon.OpenSource, sig detect.Signaller, now func() time.Time,
	locker daemon.Locker, lockMode string, log *slog.Logger) error {
	sp, err := spool.Open(cfg.spoolDir(), cfg.Spool, now, log)
	if err != nil {
		return err
	}
	res := procfs.New(cfg.ProcRoot, cfg.PasswdFile, cfg.GroupFile)
	exp := metrics.New(cfg.Node)
	var note detect.Notifier = daemon.TTYNotifier{TTYs: res}
	if cfg.Enforce == "off" {
		note = nil // report only: nothing on users' terminals
	}
	det := detect.New(cfg.Node, cfg.Policy, sig, note, res, log)
	portal := client.New(cfg.PortalURL, cred.Credential, "gpubook-agent/"+version)
	metricsProblem := ""
	if cfg.MetricsAddr != "" {
		stop, err := serveMetrics(cfg.MetricsAddr, exp, log)
		if err != nil {
			// Dying here would crash-loop under Restart=always and stop
			// enforcement for want of a dashboard: run on without metrics.
			metricsProblem = err.Error()
			log.Error("agent: /metrics NOT served; the agent runs on without it (set metrics_addr to a free port)", "addr", cfg.MetricsAddr, "err", err)
		} else {
			defer stop()
		}
	}
	// The daemon opens NVML itself, and keeps trying while it fails.
	d, err := daemon.New(ctx, daemon.Config{
		Node: cfg.Node, AgentVersion: version, CachePath: cfg.CacheFile,
		StatusPath: cfg.statusPath(), WatermarkPath: cfg.watermarkPath(), MinutePath: cfg.minutePath(), SampleInterval: cfg.SampleInterval,
		SyncInterval: cfg.SyncInterval, DeliverInterval: cfg.DeliverInterval, HeartbeatInterval: cfg.HeartbeatInterval,
		UsageSpread: cfg.UsageSpread, BusyPct: cfg.Policy.IdleUtilPct, DetectStatePath: cfg.detectPath(), NVMLRetry: cfg.NVMLRetry, MetricsProblem: metricsProblem,
		LockMode: lockMode,
	}, daemon.Deps{OpenSource: open, Resolver: res, Portal: portal, Spool: sp, Detector: det, Metrics: exp, Now: now, Log: log, Lock: locker})
	if err != nil {
		return err
	}
	log.Info("agent: started", "node", cfg.Node, "portal", cfg.PortalURL, "enforce", cfg.Enforce, "lock", lockMode)
	return d.Run(ctx)
}

// serveMetrics listens on addr (keep it local: 127.0.0.1:9478) for /metrics.
func serveMetrics(addr string, h http.Handler, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("agent: metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("agent: metrics server", "err", err)
		}
	}()
	return func() { _ = srv.Close() }, nil
}

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
