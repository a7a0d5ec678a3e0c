package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"
)

// resolvePprof reads GPUBOOK_PPROF_LISTEN: off when empty, else a loopback
// host:port. Profiles show what is in the process's memory (sessions,
// tokens), so the listener is never on an address others can reach; use
// an SSH tunnel to profile a remote replica.
func resolvePprof(getenv func(string) string, cfg *Config) error {
	const name = "GPUBOOK_PPROF_LISTEN"
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return nil
	}
	if err := checkListen(name, raw); err != nil {
		return err
	}
	if !isLoopback(raw) {
		return fmt.Errorf("%s: %q is not a loopback address; profiles expose the process's memory (e.g. 127.0.0.1:6060)", name, raw)
	}
	if raw == cfg.Listen || raw == cfg.MetricsListen {
		return fmt.Errorf("%s: %q is already the portal's or the metrics' address; choose another port", name, raw)
	}
	cfg.PprofListen = raw
	return nil
}

// startPprof serves net/http/pprof on addr until stop is called; addr ""
// starts nothing. The handlers go on a mux of their own, never on the
// portal's router or http.DefaultServeMux.
func startPprof(addr string, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof: listen on %s: %w", addr, err)
	}
	log.Info("pprof listening", "addr", ln.Addr().String())
	return servePprof(ln, log), nil
}

// servePprof serves the profiles on ln until stop is called.
func servePprof(ln net.Listener, log *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("pprof listener stopped", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx) // a profile still running is cut off: the process is leaving
	}
}
